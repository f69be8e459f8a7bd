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

from dataclasses import dataclass, field

import numpy as np

from ..errors import QueryError
from ..graph.csr import INT32_MAX
from .model import ANY, Query

__all__ = ["parse_query"]

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
        directed and undirected edges, or an empty or disconnected query.

    Examples
    --------
    >>> parse_query("a-b-c-d-a, a-c", name="diamond").m
    5
    >>> parse_query("u:1 -> v:2").vertex_labels.tolist()
    [1, 2]
    """
    if not isinstance(text, str):
        raise TypeError(f"query text must be a str, not {type(text).__name__}")
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
