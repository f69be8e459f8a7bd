"""The named-pattern registry and the pattern-collection reader."""
from __future__ import annotations

import math
import re
from itertools import permutations
from pathlib import Path

import pytest

from warpmatch.errors import InputFormatError, QueryError
from warpmatch.query import (
    automorphism_count,
    get_pattern,
    list_patterns,
    read_pattern_collection,
)
from warpmatch.query import patterns as patterns_mod

# name -> (vertices, edges, |Aut|), as documented in warpmatch.query.patterns
DOCUMENTED = {
    "triangle": (3, 3, 6),
    "square": (4, 4, 8),
    "diamond": (4, 5, 4),
    "tailed-triangle": (4, 4, 2),
    "paw": (4, 4, 2),
    "house": (5, 6, 2),
    "bowtie": (5, 6, 8),
    "bull": (5, 5, 2),
    "claw": (4, 3, 6),
    "wedge": (3, 2, 2),
}


def brute_aut(q) -> int:
    """|Aut| by trying every permutation (k <= 7)."""
    A = q.adjacency()
    return sum(1 for p in permutations(range(q.k)) if (A[list(p)][:, list(p)] == A).all())


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_documented_shape_and_automorphisms(name: str) -> None:
    k, m, aut = DOCUMENTED[name]
    q = get_pattern(name)
    assert (q.k, q.m, q.directed, q.labeled) == (k, m, False, False)
    assert automorphism_count(q) == aut == brute_aut(q)


def test_shapes_are_the_documented_graphs() -> None:
    deg = lambda n: sorted(get_pattern(n).degree().tolist())  # noqa: E731
    assert deg("diamond") == [2, 2, 3, 3]
    assert deg("tailed-triangle") == [1, 2, 2, 3]
    assert deg("house") == [2, 2, 2, 3, 3]
    assert deg("bowtie") == [2, 2, 2, 2, 4]
    assert deg("bull") == [1, 1, 2, 3, 3]
    house = get_pattern("house").adjacency()
    # the roof vertex 4 sits on the edge 0-1 of the square 0-1-2-3
    assert house[4].nonzero()[0].tolist() == [0, 1]
    assert house[0, 1] and house[1, 2] and house[2, 3] and house[3, 0]


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6, 7, 10])
def test_families(k: int) -> None:
    clique = get_pattern(f"{k}-clique")
    assert (clique.k, clique.m) == (k, k * (k - 1) // 2)
    assert automorphism_count(clique) == math.factorial(k)
    path = get_pattern(f"{k}-path")
    assert (path.k, path.m, automorphism_count(path)) == (k, k - 1, 2)
    if k >= 3:
        star = get_pattern(f"{k}-star")   # k vertices: k-1 leaves
        assert (star.k, star.m, automorphism_count(star)) == (k, k - 1, math.factorial(k - 1))
        assert star.degree().tolist() == [k - 1] + [1] * (k - 1)
        cycle = get_pattern(f"{k}-cycle")
        assert (cycle.k, cycle.m, automorphism_count(cycle)) == (k, k, 2 * k)
        assert set(cycle.degree().tolist()) == {2}


def test_family_spellings_and_canonical_names() -> None:
    for spelling in ("5-clique", "clique-5", "Clique5", "CLIQUE_5", " clique 5 "):
        assert get_pattern(spelling).name == "5-clique"
    assert get_pattern("4-cycle").m == get_pattern("square").m
    assert get_pattern("PAW").name == "tailed-triangle"
    assert get_pattern("Tailed_Triangle").name == "tailed-triangle"
    assert get_pattern("claw").name == "4-star"


def test_unknown_names_list_the_registry() -> None:
    with pytest.raises(QueryError) as ei:
        get_pattern("trianglee")
    msg = str(ei.value)
    assert "did you mean 'triangle'?" in msg
    for name in ("triangle", "diamond", "house", "k-clique", "k-star"):
        assert name in msg
    with pytest.raises(QueryError, match="k-cycle needs k >= 3"):
        get_pattern("2-cycle")
    with pytest.raises(QueryError, match="k-clique needs k >= 2"):
        get_pattern("1-clique")
    with pytest.raises(QueryError, match="k-star needs k >= 3"):
        get_pattern("2-star")
    with pytest.raises(QueryError, match="at most 64"):
        get_pattern("65-path")


def test_list_patterns_covers_the_registry() -> None:
    listing = dict(list_patterns())
    for name in ("triangle", "square", "diamond", "tailed-triangle", "house", "bowtie", "bull",
                 "paw", "claw", "wedge", "4-clique", "5-cycle", "4-path", "5-star"):
        assert name in listing and listing[name]
    assert "k-1 leaves" in listing["5-star"] and "k-star" in listing["5-star"]
    for family in ("k-clique", "k-cycle", "k-path", "k-star"):
        assert any(desc.startswith(family) for desc in listing.values())
    for name, _ in list_patterns():      # `warpmatch patterns` builds every listed name
        get_pattern(name)


def test_listed_automorphism_counts_are_true() -> None:
    """The descriptions in named.txt quote |Aut|; keep them honest."""
    checked = 0
    for name, desc in list_patterns():
        m = re.search(r"\|Aut\| (\d+)", desc)
        if m:
            assert automorphism_count(get_pattern(name)) == int(m.group(1)), name
            checked += 1
    assert checked >= 7


def test_named_file_is_in_the_collection_format() -> None:
    path = Path(patterns_mod.__file__).parent / "patterns" / "named.txt"
    qs = read_pattern_collection(path)
    assert [q.name for q in qs][:5] == ["triangle", "square", "diamond", "tailed-triangle", "house"]


# ------------------------------------------------------------------ collections
def test_stmatch24(data_dir: Path) -> None:
    path = data_dir / "patterns" / "stmatch24.txt"
    if not path.exists():
        pytest.skip(f"{path} absent")
    qs = read_pattern_collection(path)
    assert len(qs) == 24
    assert [q.name for q in qs] == [f"stmatch{i}" for i in range(1, 25)]
    assert [q.k for q in qs] == [5] * 8 + [6] * 8 + [7] * 8
    lines = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    for q, line in zip(qs, lines):
        assert q.m == line.split("\t")[2].count("-")
        assert q.is_connected() and not q.directed
        assert automorphism_count(q) == brute_aut(q)
    assert qs[7].m == 10 and automorphism_count(qs[7]) == 120   # stmatch8 is the 5-clique
    assert automorphism_count(qs[22]) == 2 * math.factorial(5)  # stmatch23 is K7 minus an edge
    assert automorphism_count(qs[23]) == math.factorial(7)      # stmatch24 is K7


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "coll.txt"
    p.write_text(text)
    return p


def test_collection_formats(tmp_path: Path) -> None:
    p = write(tmp_path, "# comment\n\ntri\t3\t0-1, 1-2, 0-2\tthe triangle\n"
                        "p3 3 0-1,1-2\n  star4\t4\t0-1, 0-2, 0-3,\n")
    qs = read_pattern_collection(p)
    assert [(q.name, q.k, q.m) for q in qs] == [("tri", 3, 3), ("p3", 3, 2), ("star4", 4, 3)]


@pytest.mark.parametrize("text,line,fragment", [
    ("tri\t3\n", 1, "expected NAME <tab> VERTICES <tab> edges"),
    ("ok\t2\t0-1\ntri\tx\t0-1, 1-2\n", 2, "vertex count 'x' is not a positive integer"),
    ("tri\t0\t0-1\n", 1, "is not a positive integer"),
    ("tri\t3\t0-1, 1_2\n", 1, "bad edge '1_2'"),
    ("tri\t3\t0-1, 1-3\n", 1, "names vertex 3 but the pattern has 3 vertices (0..2)"),
    ("tri\t3\t0-1, 0-2\n\n#\ntri\t3\t0-1, 1-2\n", 4, "already defined on line 1"),
    ("two\t4\t0-1, 2-3\n", 1, "disconnected"),
    ("loop\t2\t0-1, 1-1\n", 1, "self-loop"),
    ("dup\t2\t0-1, 1-0\n", 1, "lists an edge twice"),
    ("justaword\n", 1, "expected NAME VERTICES edges"),
])
def test_collection_errors_name_file_and_line(tmp_path: Path, text: str, line: int,
                                              fragment: str) -> None:
    p = write(tmp_path, text)
    with pytest.raises(InputFormatError) as ei:
        read_pattern_collection(p)
    assert ei.value.path == str(p) and ei.value.line == line
    assert str(ei.value).startswith(f"{p}:{line}: ")
    assert fragment in str(ei.value)


def test_collection_empty_and_missing(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match="holds no patterns"):
        read_pattern_collection(write(tmp_path, "# nothing\n\n"))
    with pytest.raises(FileNotFoundError):
        read_pattern_collection(tmp_path / "missing.txt")
