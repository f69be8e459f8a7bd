"""Pattern names against DSL text: a mistyped name is an error with suggestions, never a query.

The rule is documented in :mod:`warpmatch.query.dsl` ("Text that reads as a
pattern name"); these tests pin each of its cases, the legitimate DSL texts it
must leave alone, and ``Query.parse`` taking every kind of query the README
names (DSL text, a pattern name, a t/v/e file, a networkx graph).
"""
from __future__ import annotations

import re
from itertools import permutations
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from cli_helpers import assert_clean_error
from click.testing import CliRunner

import warpmatch as wm
from warpmatch.cli import cli
from warpmatch.errors import InputFormatError, QueryError
from warpmatch.query import Query, get_pattern, list_patterns, parse_query, resolve_query
from warpmatch.query.patterns import close_pattern_names

# text -> the suggestion its error must make (None: no pattern is close), and a fragment
# saying why the text is not read as DSL
TYPOS = [
    ("4-clqiue", "'4-clique'", "single edge between vertices '4' and 'clqiue'"),
    ("4 - clqiue", "'4-clique'", "single edge between vertices '4' and 'clqiue'"),
    ("clqiue-4", "'4-clique'", "single edge"),
    ("10-clqiue", "'10-clique'", "single edge"),
    ("5-cylce", "'5-cycle'", "single edge"),
    ("4-strar", "'4-star'", "single edge"),
    ("4-cliques", "'4-clique'", "single edge"),
    ("tailed-triangel", "'tailed-triangle'", "single edge"),
    ("bow-tie", "'bowtie'", "single edge"),
    ("k-clique", "'4-clique'", "single edge between vertices 'k' and 'clique'"),
    ("n-cycle", "'5-cycle'", "single edge"),
    ("4-kite", None, "single edge between vertices '4' and 'kite'"),
    ("tailed triangel", "'tailed-triangle'", "not query DSL text either"),
    ("trinagle", "'triangle'", "one unlabeled vertex"),
    ("hous", "'house'", "one unlabeled vertex"),
    ("  diamnod\n", "'diamond'", "one unlabeled vertex"),
    ("a", None, "a one-vertex query carries a label ('a:3')"),
]

# DSL texts that must parse as written, among them one-edge queries with word names
DSL = ["a-b", "u-v", "7-3", "x1-x2", "a - b", "alice-bob", "start-end", "src-dst",
       "buyer-seller", "head-tail", "a-b-c-a", "tri-angle-x", "a:3", "0", "a:1-b:2",
       "4-clique, clique-a", "a->b", "a-[1]-b", "a-b # tailed-triangel"]


def _check_typo_error(err: QueryError, text: str, suggestion: str | None, why: str) -> None:
    msg = str(err)
    assert msg.startswith(f"unknown pattern {text.strip()!r}"), msg
    if suggestion is None:
        assert "did you mean" not in msg
    else:
        assert f"did you mean {suggestion}?" in msg
    assert why in msg
    assert "known patterns: " in msg and "k-clique" in msg


@pytest.mark.parametrize("text,suggestion,why", TYPOS)
def test_typos_are_errors_with_suggestions(text: str, suggestion: str | None, why: str) -> None:
    for parse in (Query.parse, resolve_query, parse_query):
        with pytest.raises(QueryError) as ei:
            parse(text)
        _check_typo_error(ei.value, text, suggestion, why)


@pytest.mark.parametrize("text", DSL)
def test_dsl_text_is_left_alone(text: str) -> None:
    q = parse_query(text)
    r = Query.parse(text)
    assert (r.names, r.edges.tolist()) == (q.names, q.edges.tolist())


def test_every_one_edge_query_with_short_names_parses() -> None:
    # one- and two-character names are what one-edge DSL queries use; none reads as a name
    names = ["a", "b", "u", "v", "x", "y", "s", "t", "0", "1", "7", "v1", "n2", "ab"]
    for x, y in permutations(names, 2):
        assert parse_query(f"{x}-{y}").m == 1


def test_query_parse_takes_every_pattern_name() -> None:
    spellings = [name for name, _ in list_patterns()]
    spellings += ["Tailed Triangle", "tailed_triangle", "clique-5", "clique5", "7-cycle"]
    for name in spellings:
        q = Query.parse(name)
        assert np.array_equal(q.adjacency(), get_pattern(name).adjacency()), name
        assert q.name == get_pattern(name).name


def test_parse_query_alone_says_a_pattern_name_is_not_dsl() -> None:
    # parse_query is the DSL only; the message points at what takes names
    with pytest.raises(QueryError, match=r"'triangle' is a named pattern, not query DSL text; "
                                         r"pass it where names are accepted: Query.parse"):
        parse_query("triangle")
    with pytest.raises(QueryError, match="'5-clique' is a named pattern"):
        parse_query(" 5-clique ")


def test_suggestions_rank_the_closest_names() -> None:
    assert close_pattern_names("4-clqiue") == ["4-clique"]
    assert close_pattern_names("squre") == ["square"]
    assert close_pattern_names("tailed-triangel") == ["tailed-triangle"]
    assert close_pattern_names("zzz") == []
    with pytest.raises(QueryError, match="did you mean '5-clique'"):
        get_pattern("5-clqiue")      # get_pattern uses the same suggestions


def test_query_parse_takes_a_tve_file_and_a_networkx_graph(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "q.graph"
    p.write_text("t 3 3\nv 0 1\nv 1 2\nv 2 1\ne 0 1\ne 1 2\ne 2 0\n")
    for spec in (p, str(p)):
        q = Query.parse(spec)
        assert (q.k, q.m, q.name) == (3, 3, "q")
        assert q.vertex_labels.tolist() == [1, 2, 1]
    monkeypatch.chdir(tmp_path)
    assert Query.parse("q.graph").m == 3
    g = nx.Graph([("x", "y"), ("y", "z")])
    q = Query.parse(g)
    assert (q.names, q.m, q.directed) == (("x", "y", "z"), 2, False)
    assert Query.parse(nx.DiGraph([(0, 1), (1, 2), (2, 0)])).directed


def test_a_directory_is_said_to_be_a_directory(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "queries"
    d.mkdir()
    for spec in (d, str(d)):
        with pytest.raises(IsADirectoryError, match=r"'.*queries' is a directory, "
                                                     r"not a query file"):
            resolve_query(spec)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(IsADirectoryError, match="is a directory"):
        Query.parse("queries")          # a bare word naming a directory
    with pytest.raises(FileNotFoundError, match="no such query file"):
        resolve_query(str(tmp_path / "missing.graph"))


@pytest.mark.parametrize("content,what", [("", "is empty"), ("  \n\n", "is empty"),
                                          ("# only a comment\n", "holds only comments")])
def test_an_empty_query_file_is_named(tmp_path: Path, content: str, what: str) -> None:
    p = tmp_path / "empty.dsl"
    p.write_text(content)
    with pytest.raises(InputFormatError, match=re.escape(f"{p}: the query file {what}")):
        resolve_query(p)


def test_dsl_file_errors_name_the_file(tmp_path: Path) -> None:
    p = tmp_path / "bad.dsl"
    p.write_text("a-b,\nb-\n")
    with pytest.raises(QueryError, match=re.escape(f"{p}: the edge has no vertex after it")):
        resolve_query(p)
    p.write_text("4-clqiue\n")
    with pytest.raises(QueryError, match=re.escape(f"{p}: unknown pattern '4-clqiue'; "
                                                   "did you mean '4-clique'?")):
        resolve_query(p)


def test_api_and_cli_refuse_a_typo(tmp_path: Path) -> None:
    edges = tmp_path / "g.txt"
    edges.write_text("0 1\n1 2\n2 0\n2 3\n")
    g = wm.read_graph(edges)
    with pytest.raises(QueryError, match="did you mean '4-clique'"):
        wm.count(g, "4-clqiue")
    assert wm.count(g, "4-clique") == 0 and wm.count(g, "triangle") == 6
    res = CliRunner().invoke(cli, ["count", str(edges), "4-clqiue"])
    assert_clean_error(res, "unknown pattern '4-clqiue'", "did you mean '4-clique'?")
    res = CliRunner().invoke(cli, ["count", str(edges), str(tmp_path)])
    assert_clean_error(res, "is a directory, not a query file")
