"""The registry of named query patterns, and the reader for pattern collections.

This module is the one place that knows pattern names (``warpmatch patterns``
lists them; the API, the CLI and the benchmarks resolve names here).

Fixed patterns are data, not code: ``patterns/named.txt`` beside this module
holds them in the line format of STMatch's benchmark collection
(``../shared/data/patterns/stmatch24.txt``)::

    NAME <tab> VERTICES <tab> u-v, u-v, ... [<tab> DESCRIPTION]

Fixed patterns (vertices 0..k-1, undirected, unlabeled; |Aut| in brackets):

==================  ==  =======================================  =====
name                k   edges                                    |Aut|
==================  ==  =======================================  =====
triangle            3   0-1, 1-2, 0-2                            6
square              4   0-1, 1-2, 2-3, 0-3 (the 4-cycle)         8
diamond             4   0-1, 0-2, 1-2, 1-3, 2-3 (square + chord) 4
tailed-triangle     4   0-1, 0-2, 1-2, 2-3 (alias ``paw``)       2
house               5   0-1, 1-2, 2-3, 0-3, 0-4, 1-4             2
bowtie              5   0-1, 0-2, 1-2, 0-3, 0-4, 3-4             8
bull                5   0-1, 0-2, 1-2, 1-3, 2-4                  2
==================  ==  =======================================  =====

Parametric families, where **k is always the number of vertices**
(written ``"5-clique"``, ``"clique-5"`` or ``"clique5"``):

* ``k-clique``: every pair of ``0..k-1`` adjacent (k ≥ 2; |Aut| = k!).
* ``k-cycle``: ``0-1, 1-2, ..., (k-2)-(k-1), 0-(k-1)`` (k ≥ 3; |Aut| = 2k).
* ``k-path``: ``0-1, 1-2, ..., (k-2)-(k-1)``, k vertices and k-1 edges
  (k ≥ 2; |Aut| = 2).
* ``k-star``: the centre 0 joined to the k-1 leaves ``1..k-1``, so k vertices
  (k ≥ 3; |Aut| = (k-1)!). ``4-star`` is the claw K_{1,3}.

Aliases: ``paw`` = tailed-triangle, ``claw`` = 4-star, ``wedge`` = 3-path.
Names are case-insensitive, and ``_`` or a space may stand for ``-``.

Examples
--------
>>> get_pattern("diamond").m
5
>>> q = get_pattern("Clique-5"); (q.name, q.k, q.m)
('5-clique', 5, 10)
>>> get_pattern("4-star").degree().tolist()
[3, 1, 1, 1]
"""
from __future__ import annotations

import difflib
import os
import re
from functools import lru_cache
from importlib import resources
from typing import NamedTuple

from ..errors import InputFormatError, QueryError
from .model import MAX_QUERY_VERTICES, Query

__all__ = ["get_pattern", "list_patterns", "read_pattern_collection", "pattern_names",
           "is_pattern_name", "close_pattern_names", "unknown_pattern_message"]

_ALIASES = {"paw": "tailed-triangle", "claw": "4-star", "wedge": "3-path"}

# family -> (smallest k, the k shown in the listing, description for the listing)
_FAMILIES = {
    "clique": (2, 4, "k vertices, every pair adjacent (|Aut| = k!)"),
    "cycle": (3, 5, "k vertices on a cycle 0-1-...-(k-1)-0 (|Aut| = 2k)"),
    "path": (2, 4, "k vertices on a path 0-1-...-(k-1), k-1 edges (|Aut| = 2)"),
    "star": (3, 5, "k vertices: the centre 0 and k-1 leaves 1..k-1 (|Aut| = (k-1)!)"),
}
_FAMILY_RE = re.compile(r"^(?:(\d+)-(clique|cycle|path|star)|(clique|cycle|path|star)-?(\d+))$")


class _Entry(NamedTuple):
    """One parsed line of a pattern collection."""

    name: str
    k: int
    edges: list[tuple[int, int]]
    description: str
    line: int
    text: str


def _parse_collection(text: str, source: str) -> list[_Entry]:
    """Parse the ``NAME VERTICES u-v, ... [DESCRIPTION]`` format; errors name ``source:line``."""
    entries: list[_Entry] = []
    seen: dict[str, int] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "\t" in line:
            parts = [p.strip() for p in line.split("\t")]
            parts = [p for p in parts if p] if len(parts) > 4 else parts
            if len(parts) < 3:
                raise InputFormatError(source, lineno, "expected NAME <tab> VERTICES <tab> "
                                       "edges as u-v, ... [<tab> description]", raw)
            name, k_text, edge_text = parts[0], parts[1], parts[2]
            description = " ".join(parts[3:])
        else:
            m = re.match(r"^(\S+)\s+(\S+)\s+(.*)$", line)
            if m is None:
                raise InputFormatError(source, lineno, "expected NAME VERTICES edges "
                                       "(e.g. 'triangle 3 0-1, 1-2, 0-2')", raw)
            name, k_text, edge_text = m.groups()
            description = ""
        if not k_text.isdigit() or int(k_text) < 1:
            raise InputFormatError(source, lineno, f"the vertex count {k_text!r} is not a "
                                   "positive integer", raw)
        k = int(k_text)
        edges: list[tuple[int, int]] = []
        for piece in edge_text.split(","):
            piece = piece.strip()
            if not piece:
                continue
            em = re.fullmatch(r"(\d+)\s*-\s*(\d+)", piece)
            if em is None:
                raise InputFormatError(source, lineno, f"bad edge {piece!r} (expected u-v with "
                                       "integer vertex ids)", raw)
            u, w = int(em.group(1)), int(em.group(2))
            if u >= k or w >= k:
                raise InputFormatError(source, lineno, f"edge {piece} names vertex {max(u, w)} "
                                       f"but the pattern has {k} vertices (0..{k - 1})", raw)
            edges.append((u, w))
        if name.lower() in seen:
            raise InputFormatError(source, lineno, f"pattern {name!r} was already defined on "
                                   f"line {seen[name.lower()]}", raw)
        seen[name.lower()] = lineno
        entry = _Entry(name, k, edges, description, lineno, raw)
        _build(entry, source)   # validate now, so the error names the line
        entries.append(entry)
    return entries


def _build(entry: _Entry, source: str) -> Query:
    try:
        return Query.from_edges(entry.edges, k=entry.k, name=entry.name)
    except QueryError as e:
        raise InputFormatError(source, entry.line, f"pattern {entry.name!r}: {e}",
                               entry.text) from None


@lru_cache(maxsize=1)
def _named() -> dict[str, _Entry]:
    """The fixed patterns of ``patterns/named.txt`` (package data), by lower-case name."""
    ref = resources.files(__package__).joinpath("patterns", "named.txt")
    return {e.name.lower(): e for e in _parse_collection(ref.read_text(encoding="utf-8"),
                                                         "warpmatch/query/patterns/named.txt")}


def _normalise(name: str) -> str:
    return re.sub(r"[\s_]+", "-", name.strip().lower())


def _family(family: str, k: int) -> Query:
    lo = _FAMILIES[family][0]
    if k < lo:
        raise QueryError(f"a k-{family} needs k >= {lo} vertices, not {k}")
    if family == "clique":
        edges = [(i, j) for i in range(k) for j in range(i + 1, k)]
    elif family == "cycle":
        edges = [(i, i + 1) for i in range(k - 1)] + [(0, k - 1)]
    elif family == "path":
        edges = [(i, i + 1) for i in range(k - 1)]
    else:  # star: centre 0, leaves 1..k-1
        edges = [(0, i) for i in range(1, k)]
    return Query.from_edges(edges, k=k, name=f"{k}-{family}")


def pattern_names() -> list[str]:
    """Every name :func:`get_pattern` accepts literally (fixed patterns and aliases), sorted;
    the parametric families are written ``k-clique``, ``k-cycle``, ``k-path``, ``k-star``."""
    return sorted([*_named(), *_ALIASES, *(f"k-{f}" for f in _FAMILIES)])


def get_pattern(name: str) -> Query:
    """The named pattern ``name`` as a :class:`~warpmatch.query.Query`.

    Parameters
    ----------
    name : str
        A fixed pattern (``"triangle"``, ``"square"``, ``"diamond"``,
        ``"tailed-triangle"``, ``"house"``, ``"bowtie"``, ``"bull"``), an alias
        (``"paw"``, ``"claw"``, ``"wedge"``) or a parametric family with k
        vertices (``"5-clique"``/``"clique-5"``, ``"6-cycle"``, ``"4-path"``,
        ``"8-star"``); case-insensitive. See the module docstring for the edges.

    Returns
    -------
    Query
        Undirected and unlabeled; its ``name`` is the canonical name
        (``"paw"`` gives ``"tailed-triangle"``, ``"clique-5"`` gives ``"5-clique"``).

    Raises
    ------
    QueryError
        If the name is unknown (the message lists the known names), or a
        family's k is too small or above 64.

    Examples
    --------
    >>> get_pattern("paw").name
    'tailed-triangle'
    >>> get_pattern("6-cycle").m
    6
    """
    if not isinstance(name, str):
        raise TypeError(f"a pattern name must be a str, not {type(name).__name__}")
    key = _normalise(name)
    key = _ALIASES.get(key, key)
    named = _named()
    if key in named:
        return _build(named[key], "warpmatch/query/patterns/named.txt")
    m = _FAMILY_RE.match(key)
    if m is not None:
        k = int(m.group(1) or m.group(4))
        return _family(m.group(2) or m.group(3), k)
    raise QueryError(unknown_pattern_message(name))


def is_pattern_name(name: str) -> bool:
    """True if :func:`get_pattern` knows ``name`` (without building it)."""
    key = _normalise(name)
    key = _ALIASES.get(key, key)
    return key in _named() or _FAMILY_RE.match(key) is not None


def _spellings(key: str) -> dict[str, str]:
    """Every spelling a name could be a typo of, mapped to the canonical name to suggest.

    Family names are spelled with the k written in ``key`` (so ``"10-clqiue"`` is
    compared with ``"10-clique"``), or with the listing's k and with a literal
    ``k`` when ``key`` has no usable number (``"k-clique"`` suggests ``"4-clique"``).
    """
    out = {e.name.lower(): e.name for e in _named().values()}
    out.update({a: a for a in _ALIASES})
    digits = re.search(r"\d+", key)
    for f, (lo, shown, _) in _FAMILIES.items():
        k = int(digits.group()) if digits else shown
        k = k if lo <= k <= MAX_QUERY_VERTICES else shown
        canonical = f"{k}-{f}"
        for spelling in (canonical, f"{f}-{k}", f"{f}{k}", f"k-{f}"):
            out.setdefault(spelling, canonical)
    return out


def pattern_similarity(name: str) -> list[tuple[str, float]]:
    """Known pattern names ranked by their similarity to ``name``, best first.

    Parameters
    ----------
    name : str
        Any text; it is compared case-insensitively, with ``_`` and spaces
        read as ``-`` (as :func:`get_pattern` reads names).

    Returns
    -------
    list of (str, float)
        ``(canonical name, difflib ratio in [0, 1])`` for every fixed pattern,
        alias and parametric family (spelled with the k found in ``name``).

    Examples
    --------
    >>> pattern_similarity("4-clqiue")[0]
    ('4-clique', 0.875)
    """
    key = _normalise(name)
    best: dict[str, float] = {}
    for spelling, canonical in _spellings(key).items():
        r = difflib.SequenceMatcher(None, key, spelling).ratio()
        best[canonical] = max(best.get(canonical, 0.0), r)
    return sorted(best.items(), key=lambda item: (-item[1], item[0]))


def close_pattern_names(name: str, n: int = 3, cutoff: float = 0.6) -> list[str]:
    """The pattern names to suggest for a mistyped ``name`` ("did you mean ...?").

    Parameters
    ----------
    name : str
        The unknown name.
    n : int, optional
        At most this many suggestions. The default is 3.
    cutoff : float, optional
        The least difflib similarity ratio of a suggestion. The default is
        0.6, :func:`difflib.get_close_matches`'s.

    Returns
    -------
    list of str
        Canonical names, best first. Names much less similar than the best
        one (by more than 0.1) are left out, so a clear typo gets one answer.

    Examples
    --------
    >>> close_pattern_names("tailed-triangel")
    ['tailed-triangle']
    >>> close_pattern_names("nothing-alike")
    []
    """
    ranked = [(c, r) for c, r in pattern_similarity(name) if r >= cutoff]
    if not ranked:
        return []
    return [c for c, r in ranked[:n] if r >= ranked[0][1] - 0.1]


def unknown_pattern_message(name: str, also: str = "") -> str:
    """The one wording of "no pattern has this name": the closest names, then the registry.

    Parameters
    ----------
    name : str
        The name as the user wrote it.
    also : str, optional
        A clause shown right after the name, e.g. ``"(and no file of that
        name exists)"``. The default is ``""``.

    Returns
    -------
    str
        ``"unknown pattern '4-clqiue'; did you mean '4-clique'? known patterns: ..."``.
    """
    close = [repr(c) for c in close_pattern_names(name)]
    if close:
        hint = "did you mean " + (close[0] if len(close) == 1
                                  else ", ".join(close[:-1]) + " or " + close[-1]) + "? "
    else:
        hint = ""
    also = f" {also}" if also else ""
    return (f"unknown pattern {name!r}{also}; {hint}known patterns: {', '.join(pattern_names())} "
            "(k = number of vertices, e.g. '5-clique')")


def pattern_words() -> frozenset[str]:
    """The single words that name a fixed pattern, an alias or a family (``"clique"``)."""
    return frozenset(w for w in (*_named(), *_ALIASES, *_FAMILIES) if "-" not in w)


def list_patterns() -> list[tuple[str, str]]:
    """The registry: ``(name, description)`` for every fixed pattern, alias and family.

    Returns
    -------
    list of (str, str)
        Fixed patterns in file order, then aliases, then one example of each
        parametric family (``"4-clique"``, ``"5-cycle"``, ``"4-path"``,
        ``"5-star"``) whose description states the family's rule. Every
        name is accepted by :func:`get_pattern`.

    Examples
    --------
    >>> print(dict(list_patterns())["5-star"])  # doctest: +NORMALIZE_WHITESPACE
    k-star for any k from 3 to 64 (k = number of vertices; here k=5):
    k vertices: the centre 0 and k-1 leaves 1..k-1 (|Aut| = (k-1)!)
    """
    out = []
    for e in _named().values():
        edges = ", ".join(f"{u}-{w}" for u, w in e.edges)
        out.append((e.name, f"{e.description}; edges {edges}" if e.description else edges))
    out += [(a, f"alias of {t}") for a, t in _ALIASES.items()]
    for f, (lo, shown, desc) in _FAMILIES.items():
        out.append((f"{shown}-{f}", f"k-{f} for any k from {lo} to {MAX_QUERY_VERTICES} "
                                    f"(k = number of vertices; here k={shown}): {desc}"))
    return out


def read_pattern_collection(path: str | os.PathLike[str]) -> list[Query]:
    """Read a pattern collection such as STMatch's ``stmatch24.txt``.

    Parameters
    ----------
    path : str or os.PathLike
        A text file with one pattern per line,
        ``NAME <tab> VERTICES <tab> u-v, u-v, ...`` and an optional fourth
        tab-separated description (without tabs, whitespace separates the
        first three fields). Blank lines and lines starting with ``#`` are
        skipped. Patterns are undirected and unlabeled.

    Returns
    -------
    list of Query
        In file order, each named by its NAME.

    Raises
    ------
    InputFormatError
        ``path:line`` and the offending text for a malformed line, an edge
        outside ``0..VERTICES-1``, a repeated name, a disconnected pattern or
        a repeated edge; ``path`` alone for a file without patterns.
    FileNotFoundError
        If ``path`` does not exist.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "p.txt"
    >>> _ = p.write_text("tri\\t3\\t0-1, 1-2, 0-2\\n")
    >>> [q.name for q in read_pattern_collection(p)]
    ['tri']
    """
    path = os.fspath(path)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    entries = _parse_collection(text, path)
    if not entries:
        raise InputFormatError(path, None, "the file holds no patterns (expected lines "
                               "NAME <tab> VERTICES <tab> u-v, ...)")
    return [_build(e, path) for e in entries]
