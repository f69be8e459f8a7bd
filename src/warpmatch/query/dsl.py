"""The query text DSL: ``"a-b, b-c, c-a"``.

A small hand-written recursive-descent parser (one pass over the characters,
no regular-expression soup) so that every error can point at the exact column
of the text the user typed.

Grammar
-------
::

    query   := item ( SEP item )*          SEP is ',' or ';' or a newline
    item    := vertex ( edge vertex )*     a lone vertex, or a chain
    vertex  := NAME [ ':' LABEL ]
    edge    := '-'  | '->'  | '<-'                      (unlabeled)
             | '-[' LABEL ']-' | '-[' LABEL ']->' | '<-[' LABEL ']-'
    NAME    := identifier (letters, digits, '_', not starting with a digit)
             | non-negative integer
    LABEL   := non-negative integer

* A chain ``a-b-c`` is the edges ``a-b`` and ``b-c``.
* ``a->b`` is a directed edge from ``a`` to ``b``; ``a<-b`` is the edge
  ``b->a``. A query is directed iff it has a directed edge; mixing directed
  and undirected edges in one query is an error.
* ``a:3`` gives vertex ``a`` the label 3; the label may be written at any
  occurrence of the vertex, but every occurrence that gives one must agree.
  A vertex that never gets a label matches any data label (``-1``).
* ``a-[7]-b`` (``a-[7]->b``) gives the edge the label 7; an unlabeled edge
  matches any data edge label.
* Whitespace is free, empty items are allowed (``"a-b,,b-c,"``), and ``#``
  starts a comment that runs to the end of the line.
* Integer names are names, not ids: ``"7-3"`` is a query with vertex names
  ``"7"`` and ``"3"`` (ids 0 and 1). Vertex ids follow first appearance.
* Repeating an identical edge is harmless; repeating it with another label is
  an error, and so is a self-loop ``a-a``.

Every syntax error is a :class:`~warpmatch.errors.QueryError` whose message
shows the offending line with a caret under the column.

Text that reads as a pattern name
---------------------------------
A pattern name such as ``4-clique`` or ``tailed-triangle`` is also valid
grammar (an edge between the vertices ``4`` and ``clique``), so a mistyped
name would silently count a one-edge query. The parser therefore rejects,
with the closest pattern names suggested, a whole text made only of names,
``-`` and blanks (no label, bracket, arrow, separator or comment) that is

* a single name that is not an integer (``"triangle"``, ``"trinagle"``,
  ``"a"``): one unlabeled vertex is never what was meant; a one-vertex query
  carries a label (``"a:3"``);
* one edge ``x-y`` where one end is an integer and the other a word of four
  or more letters (``"4-clqiue"``, ``"cycel-5"``, ``"4-kite"``), or where an
  end is a pattern or family word (``"k-clique"``, ``"n-cycle"``), or where
  the text is within a small edit distance of a pattern name (difflib ratio
  of at least 0.8: ``"tailed-triangel"``, ``"bow-tie"``);
* words separated by blanks (not DSL at all) close to a pattern name in the
  same sense (``"tailed triangel"``).

Every other text is DSL: ``"a-b"``, ``"7-3"``, ``"alice-bob"``,
``"start-end"``, ``"a-b-c-a"`` and ``"a:3"`` parse as written.

Examples
--------
>>> q = parse_query("a-b-c, c-a")
>>> q.k, q.m, q.names
(3, 3, ('a', 'b', 'c'))
>>> parse_query("a:1-[5]-b:2").to_dsl()
'a:1-[5]-b:2'
>>> parse_query("x->y; y->z; z<-x").directed
True
>>> parse_query("a-b, b->c")
Traceback (most recent call last):
...
warpmatch.errors.QueryError: cannot mix directed ('->', '<-') and undirected ('-') edges in one query (the first edge, column 2, is undirected) at column 7:
  a-b, b->c
        ^
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import QueryError
from ..graph.csr import INT32_MAX
from .model import ANY, Query
from .patterns import is_pattern_name, pattern_similarity, pattern_words, unknown_pattern_message

__all__ = ["parse_query", "pattern_name_error"]

_SEPARATORS = ",;\n"


def _caret_error(text: str, pos: int, message: str) -> QueryError:
    """A QueryError showing the line of ``text`` that holds ``pos`` with a caret under it."""
    pos = max(0, min(pos, len(text)))
    line_start = text.rfind("\n", 0, pos) + 1
    line_end = text.find("\n", pos)
    if line_end < 0:
        line_end = len(text)
    line_no = text.count("\n", 0, pos) + 1
    col = pos - line_start + 1
    where = f"line {line_no}, column {col}" if "\n" in text.rstrip("\n") else f"column {col}"
    # Tabs are shown as one space so that the caret stays under its character.
    shown = text[line_start:line_end].replace("\t", " ").replace("\r", " ")
    return QueryError(f"{message} at {where}:\n  {shown}\n  {' ' * (col - 1)}^")


@dataclass
class _Builder:
    """Accumulates vertices and edges while parsing; knows where each was first seen."""

    text: str
    index: dict[str, int] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    label_pos: list[int] = field(default_factory=list)
    edges: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)  # -> (label, pos)
    kind: str | None = None          # "directed" | "undirected", fixed by the first edge
    kind_pos: int = 0

    def vertex(self, name: str, label: int, pos: int, label_at: int) -> int:
        u = self.index.get(name)
        if u is None:
            u = len(self.names)
            self.index[name] = u
            self.names.append(name)
            self.labels.append(ANY)
            self.label_pos.append(-1)
        if label != ANY:
            old = self.labels[u]
            if old == ANY:
                self.labels[u] = label
                self.label_pos[u] = label_at
            elif old != label:
                prev = self._col(self.label_pos[u])
                raise _caret_error(self.text, label_at,
                                   f"vertex {name!r} is given label {label} here but label "
                                   f"{old} earlier ({prev})")
        return u

    def _col(self, pos: int) -> str:
        line_start = self.text.rfind("\n", 0, pos) + 1
        if "\n" in self.text.rstrip("\n"):
            return f"line {self.text.count(chr(10), 0, pos) + 1}, column {pos - line_start + 1}"
        return f"column {pos - line_start + 1}"

    def edge(self, u: int, w: int, label: int, directed: bool, pos: int) -> None:
        kind = "directed" if directed else "undirected"
        if self.kind is None:
            self.kind, self.kind_pos = kind, pos
        elif kind != self.kind:
            raise _caret_error(
                self.text, pos,
                "cannot mix directed ('->', '<-') and undirected ('-') edges in one query "
                f"(the first edge, {self._col(self.kind_pos)}, is {self.kind})")
        if u == w:
            raise _caret_error(self.text, pos, f"self-loop on vertex {self.names[u]!r}")
        key = (u, w) if directed else (min(u, w), max(u, w))
        old = self.edges.get(key)
        if old is None:
            self.edges[key] = (label, pos)
        elif old[0] != label:
            def show(lab: int) -> str:
                return "no label" if lab == ANY else f"label {lab}"
            raise _caret_error(
                self.text, pos,
                f"edge {self.names[u]}-{self.names[w]} is given {show(label)} here but "
                f"{show(old[0])} earlier ({self._col(old[1])})")


class _Parser:
    """Recursive-descent parser over ``text``; ``pos`` is the next character."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.b = _Builder(text)

    # ------------------------------------------------------------ lexing
    def error(self, message: str, pos: int | None = None) -> QueryError:
        return _caret_error(self.text, self.pos if pos is None else pos, message)

    def peek(self, n: int = 0) -> str:
        i = self.pos + n
        return self.text[i] if i < len(self.text) else ""

    def skip_space(self) -> None:
        """Skip blanks and comments, but not newlines (they separate items)."""
        t = self.text
        while self.pos < len(t):
            c = t[self.pos]
            if c == "#":
                end = t.find("\n", self.pos)
                self.pos = len(t) if end < 0 else end
            elif c.isspace() and c != "\n":
                self.pos += 1
            else:
                break

    def describe_here(self) -> str:
        c = self.peek()
        return "the end of the text" if c == "" else repr(c)

    def integer(self, what: str) -> int:
        start = self.pos
        while self.peek().isdigit() and self.peek().isascii():
            self.pos += 1
        if self.pos == start:
            if self.peek() == "-" and self.peek(1).isdigit():
                raise self.error(f"{what} must be a non-negative integer")
            raise self.error(f"expected {what} (a non-negative integer), "
                             f"found {self.describe_here()}")
        value = int(self.text[start:self.pos])
        if value > INT32_MAX:   # labels are int32; a larger one would not fit the arrays
            raise self.error(f"{what} is too large ({value}; labels are at most {INT32_MAX})",
                             start)
        return value

    # ----------------------------------------------------------- grammar
    def name(self) -> str:
        t, start = self.text, self.pos
        c = self.peek()
        if c.isascii() and c.isdigit():
            while self.peek().isascii() and self.peek().isdigit():
                self.pos += 1
            if self.peek().isalpha() or self.peek() == "_":
                raise self.error("a vertex name is an identifier or an integer; "
                                 "it cannot start with a digit")
            return str(int(t[start:self.pos]))   # "007" and "7" are the same vertex
        if c.isalpha() or c == "_":
            while self.peek().isalnum() or self.peek() == "_":
                self.pos += 1
            return t[start:self.pos]
        raise self.error(f"expected a vertex name, found {self.describe_here()}")

    def vertex(self) -> int:
        pos = self.pos
        nm = self.name()
        label, label_at = ANY, pos
        self.skip_space()
        if self.peek() == ":":
            self.pos += 1
            self.skip_space()
            label_at = self.pos
            label = self.integer(f"a label for vertex {nm!r} after ':'")
        return self.b.vertex(nm, label, pos, label_at)

    def at_edge(self) -> bool:
        return self.peek() == "-" or (self.peek() == "<" and self.peek(1) == "-")

    def bracket_label(self) -> int:
        """``[ LABEL ]`` after the opening '-' of an edge; ``pos`` is at '['."""
        self.pos += 1
        self.skip_space()
        lab = self.integer("an edge label inside '[...]'")
        self.skip_space()
        if self.peek() != "]":
            raise self.error(f"expected ']' to close the edge label, found {self.describe_here()}")
        self.pos += 1
        self.skip_space()
        if self.peek() != "-":
            raise self.error("expected '-' or '->' after the edge label "
                             f"(write a-[{lab}]-b or a-[{lab}]->b), found {self.describe_here()}")
        self.pos += 1
        return lab

    def edge(self) -> tuple[int, int, int]:
        """Parse an edge operator; returns (label, direction, pos).

        direction: 0 undirected, +1 left-to-right, -1 right-to-left.
        """
        pos = self.pos
        if self.peek() == "<":
            self.pos += 2
            label = self.bracket_label() if self.peek() == "[" else ANY
            if self.peek() == ">":
                raise self.error("an edge cannot point both ways; write a->b, b->a", pos)
            return label, -1, pos
        self.pos += 1   # the '-'
        label = self.bracket_label() if self.peek() == "[" else ANY
        if self.peek() == ">":
            self.pos += 1
            return label, +1, pos
        return label, 0, pos

    def item(self) -> None:
        u = self.vertex()
        while True:
            self.skip_space()
            if not self.at_edge():
                return
            label, direction, pos = self.edge()
            self.skip_space()
            if self.peek() in ("", *_SEPARATORS):
                raise self.error(f"the edge has no vertex after it, found {self.describe_here()}")
            w = self.vertex()
            if direction < 0:
                self.b.edge(w, u, label, True, pos)
            else:
                self.b.edge(u, w, label, direction > 0, pos)
            u = w

    def query(self) -> None:
        while True:
            self.skip_space()
            c = self.peek()
            if c == "":
                return
            if c in _SEPARATORS:
                self.pos += 1
                continue
            self.item()
            self.skip_space()
            c = self.peek()
            if c not in ("", *_SEPARATORS):
                raise self.error(
                    f"expected ',', ';', a newline or an edge ('-', '->', '<-'), found {c!r}")


# Names, '-' and blanks only: the texts a pattern name (or a typo of one) can be.
_BARE = re.compile(r"\w+(?:[ \t]*-[ \t]*\w+|[ \t]+\w+)*")
# A difflib ratio this high is a typo: legitimate one-edge queries ("start-end",
# "alice-bob", "a-b") stay below 0.7 against every pattern name.
_TYPO_RATIO = 0.8


def _pattern_intent(text: str) -> str | None:
    """Why ``text`` must have been meant as a pattern name, or None if it is DSL text.

    The rule is the one in the module docstring; it looks at the whole text
    because only a whole text can be a name.
    """
    t = text.strip()
    if not _BARE.fullmatch(t):
        return None
    if is_pattern_name(t):
        return "pattern"
    ends = [e.strip() for e in t.split("-")]
    blank_separated = any(c.isspace() for e in ends for c in e)
    if blank_separated:
        # not DSL at all; a name written with spaces if it is close to one,
        # else the parser's syntax error (with its caret) is the better message
        close = pattern_similarity(t)
        return "words" if close and close[0][1] >= _TYPO_RATIO else None
    if len(ends) == 1:
        return None if t.isdigit() else "vertex"
    if len(ends) != 2:
        return None   # a chain "a-b-c-a" is a query
    x, y = (e.lower() for e in ends)
    if (x.isdigit() and y.isalpha() and len(y) >= 4) or (y.isdigit() and x.isalpha()
                                                         and len(x) >= 4):
        return "edge"   # the shape of a family name: "4-clqiue", "cycel-5"
    if {x, y} & pattern_words():
        return "edge"   # "k-clique", "n-cycle": a family with its k unwritten
    close = pattern_similarity(t)
    return "edge" if close and close[0][1] >= _TYPO_RATIO else None


def pattern_name_error(text: str, also: str = "") -> QueryError | None:
    """The error for a text that reads as a pattern name or a typo of one, else None.

    The rule is in the module docstring; :func:`parse_query` raises this error,
    and :func:`~warpmatch.query.io.resolve_query` raises it first with ``also``
    saying that no file of that name exists either.

    Parameters
    ----------
    text : str
        The whole query text.
    also : str, optional
        A clause added after the unknown pattern's name (e.g. ``"(and no file
        of that name exists)"``). The default is ``""``.

    Returns
    -------
    QueryError or None
        None if ``text`` is DSL text to parse.

    Examples
    --------
    >>> print(pattern_name_error("a-b"))
    None
    >>> str(pattern_name_error("4-clqiue")).startswith(
    ...     "unknown pattern '4-clqiue'; did you mean '4-clique'?")
    True
    """
    intent = _pattern_intent(text)
    if intent is None:
        return None
    t = text.strip()
    if intent == "pattern":
        return QueryError(
            f"{t!r} is a named pattern, not query DSL text; pass it where names are "
            f"accepted: Query.parse({t!r}), "
            f"get_pattern({t!r}), or the QUERY argument of the command line")
    if intent == "vertex":
        why = (f"As query DSL text {t!r} would be one unlabeled vertex: a query names its "
               "edges ('a-b, b-c, c-a'), and a one-vertex query carries a label ('a:3')")
    elif intent == "edge":
        x, y = (e.strip() for e in t.split("-"))
        why = (f"It is not read as query DSL text, where it would be the single edge between "
               f"vertices {x!r} and {y!r} (write a one-edge query as e.g. 'a-b')")
    else:
        why = "It is not query DSL text either (DSL joins vertex names by edges: 'a-b, b-c')"
    return QueryError(f"{unknown_pattern_message(t, also)}. {why}")


def parse_query(text: str, name: str = "query") -> Query:
    """Parse query DSL text into a :class:`~warpmatch.query.Query`.

    See the module docstring for the grammar.

    Parameters
    ----------
    text : str
        DSL text such as ``"a-b, b-c, c-a"``, ``"a:3-[7]-b:5"`` or ``"a->b->c"``.
    name : str, optional
        The query's name in messages and ``explain``. The default is ``"query"``.

    Returns
    -------
    Query
        Vertex ids follow the order of first appearance in ``text``; vertex
        names are the names written in ``text``.

    Raises
    ------
    QueryError
        On a syntax error (the message shows the text with a caret under the
        column), an inconsistent vertex or edge label, a self-loop, mixed
        directed and undirected edges, or an empty or disconnected query; and
        for a text that reads as a pattern name or a typo of one (see the
        module docstring), with the closest names suggested.

    Examples
    --------
    >>> parse_query("a-b-c-d-a, a-c", name="diamond").m
    5
    >>> parse_query("u:1 -> v:2").vertex_labels.tolist()
    [1, 2]
    """
    if not isinstance(text, str):
        raise TypeError(f"query text must be a str, not {type(text).__name__}")
    err = pattern_name_error(text)
    if err is not None:
        raise err
    p = _Parser(text)
    p.query()
    b = p.b
    if not b.names:
        raise QueryError("the query text is empty: write at least one vertex, e.g. 'a-b, b-c, c-a'")
    directed = b.kind == "directed"
    keys = list(b.edges)
    edges = np.asarray(keys, dtype=np.int64).reshape(-1, 2)
    edge_labels = np.asarray([b.edges[e][0] for e in keys], dtype=np.int32)
    return Query(k=len(b.names), edges=edges, edge_labels=edge_labels,
                 vertex_labels=np.asarray(b.labels, dtype=np.int32), directed=directed,
                 names=tuple(b.names), name=name)
