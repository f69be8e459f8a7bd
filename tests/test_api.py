"""Tests of the Python API (warpmatch.count / match / explain) against the reference engine and networkx."""
from __future__ import annotations

import doctest
import warnings

import networkx as nx
import numpy as np
import pytest
from networkx.algorithms import isomorphism as iso

import warpmatch as wm
from warpmatch import api
from warpmatch.errors import (BackendUnavailableError, GraphError, QueryError,
                              UnknownLabelWarning, WarpmatchError)

TRI = "a-b, b-c, c-a"
PATTERNS = ["triangle", "square", "diamond", "tailed-triangle", "4-clique", "house", "5-cycle"]


def _ba(n: int = 40, m: int = 3, seed: int = 5, shift: int = 0, labels: int = 0) -> wm.Graph:
    """A small BA graph whose file ids are ``shift + 3*v`` (not 0..n-1) when shift > 0."""
    G = nx.barabasi_albert_graph(n, m, seed=seed)
    src, dst = np.array(G.edges()).T
    ids = None if not shift else shift + 3 * np.arange(n)
    rng = np.random.default_rng(seed)
    vl = rng.integers(0, labels, n) if labels else None
    return wm.Graph.from_edges(src, dst, n=n, ids=ids, vertex_labels=vl, name="ba")


def _label_ok(gdata: dict, qdata: dict) -> bool:
    # a query vertex without a label matches any data vertex
    return "label" not in qdata or gdata.get("label") == qdata["label"]


def _nx_embeddings(G: nx.Graph, Q: nx.Graph, induced: bool = False) -> int:
    """Independent oracle: networkx VF2 monomorphisms (induced: subgraph isomorphisms)."""
    matcher = iso.DiGraphMatcher if G.is_directed() else iso.GraphMatcher
    gm = matcher(G, Q, node_match=_label_ok)
    it = gm.subgraph_isomorphisms_iter() if induced else gm.subgraph_monomorphisms_iter()
    return sum(1 for _ in it)


# ------------------------------------------------------------------- count
def test_count_complete_graph_semantics() -> None:
    g = wm.Graph.from_networkx(nx.complete_graph(5))
    assert wm.count(g, "triangle") == 60            # C(5,3) triangles x 3! automorphisms
    assert wm.count(g, "triangle", mode="subgraphs") == 10
    assert wm.count(g, "4-clique", mode="subgraphs") == 5
    assert wm.count(g, "square", mode="subgraphs") == 15   # 3 four-cycles in each K4
    assert wm.count(g, "square", induced=True) == 0        # K5 has chords everywhere
    assert wm.count(g, "a-b, b-c", induced=True) == 0


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("mode", ["embeddings", "subgraphs"])
def test_count_equals_reference(pattern: str, mode: str) -> None:
    g = _ba(60, 4, seed=11)
    for induced in (False, True):
        want = wm.count(g, pattern, mode=mode, induced=induced, backend="reference")
        got = wm.count(g, pattern, mode=mode, induced=induced)
        assert got == want, (pattern, mode, induced)


@pytest.mark.parametrize("pattern", ["triangle", "square", "tailed-triangle", "diamond"])
def test_count_equals_networkx(pattern: str) -> None:
    g = _ba(50, 3, seed=2)
    q = wm.get_pattern(pattern)
    G, Q = g.to_networkx(), q.to_networkx()
    assert wm.count(g, q) == _nx_embeddings(G, Q)
    assert wm.count(g, q, induced=True) == _nx_embeddings(G, Q, induced=True)


def test_count_labeled_equals_networkx() -> None:
    g = _ba(60, 4, seed=3, labels=3)
    G = g.to_networkx()
    for text in ["a:0-b:1, b-c:2, c-a", "a:1-b:1, b-c, c-d:0", "a:2-b, b-c, c-d, d-a"]:
        q = wm.Query.parse(text)
        assert wm.count(g, text) == _nx_embeddings(G, q.to_networkx()), text


def test_count_directed() -> None:
    D = nx.gnp_random_graph(30, 0.15, seed=4, directed=True)
    g = wm.Graph.from_networkx(D)
    assert g.directed
    q = wm.Query.parse("a->b, b->c, c->a")
    want = wm.count(g, q, backend="reference")
    assert wm.count(g, q) == want
    assert want == _nx_embeddings(D, q.to_networkx())


def test_query_forms_agree(tmp_path) -> None:
    g = _ba()
    qfile = tmp_path / "tri.graph"
    qfile.write_text("t 3 3\nv 0 0\nv 1 0\nv 2 0\ne 0 1\ne 1 2\ne 2 0\n")
    want = wm.count(g, "triangle")
    assert wm.count(g, "a-b, b-c, c-a") == want
    assert wm.count(g, wm.Query.parse("x-y, y-z, z-x")) == want
    assert wm.count(g, nx.cycle_graph(3)) == want
    # t/v/e files always carry vertex labels, so check the file on a graph labelled all 0
    g0 = wm.Graph.from_edges(*g.edges(), n=g.n, vertex_labels=np.zeros(g.n, np.int32))
    assert wm.count(g0, qfile) == want
    assert wm.count(g0, str(qfile)) == want


def test_graph_as_path_and_networkx(tmp_path) -> None:
    G = nx.barabasi_albert_graph(40, 3, seed=8)
    p = tmp_path / "g.txt"
    p.write_text("# a comment\n" + "".join(f"{u + 500}\t{v + 500}\n" for u, v in G.edges()))
    want = sum(nx.triangles(G).values()) // 3
    assert wm.count(p, "triangle", mode="subgraphs") == want
    assert wm.count(str(p), "triangle", mode="subgraphs") == want
    assert wm.count(G, "triangle", mode="subgraphs") == want


def test_count_result_reports() -> None:
    g = _ba()
    r = wm.count_result(g, "triangle", mode="subgraphs", backend="reference")
    d = r.as_dict()
    for key in ("count", "mode", "induced", "backend", "seconds", "multiplier", "graph", "query"):
        assert key in d
    assert d["backend"] == "reference" and d["mode"] == "subgraphs" and d["induced"] is False
    assert r.describe().startswith("triangle: ") and "subgraph" in r.describe()
    assert "(non-induced)" in r.describe()


def test_describe_count() -> None:
    assert api.describe_count(1234, "embeddings", False, "triangle") == \
        "triangle: 1,234 embeddings (non-induced)"
    assert api.describe_count(1, "subgraphs", True) == "1 subgraph (induced)"


def test_progress_callback() -> None:
    g = _ba(200, 4)
    calls: list[tuple[int, int]] = []
    n = wm.count(g, "triangle", progress=lambda done, total: calls.append((done, total)))
    assert n == wm.count(g, "triangle", backend="reference")
    for done, total in calls:
        assert 0 <= done <= total
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)


# ------------------------------------------------------------------- match
def _is_embedding(g: wm.Graph, q: wm.Query, row_internal: np.ndarray) -> bool:
    if len(set(row_internal.tolist())) != q.k:
        return False
    return all(g.has_edge(int(row_internal[u]), int(row_internal[w])) for u, w in q.edges)


@pytest.mark.parametrize("mode", ["embeddings", "subgraphs"])
def test_match_rows_are_embeddings_in_query_order(mode: str) -> None:
    g = _ba(50, 3, seed=9, shift=1000)   # file ids 1000, 1003, ...
    q = wm.Query.parse("a-b, b-c, c-a, c-d")   # tailed triangle, d is the tail
    rows = np.concatenate(list(wm.match(g, q, mode=mode)))
    assert rows.dtype == np.int64 and rows.shape[1] == 4
    assert len(rows) == wm.count(g, q, mode=mode)
    assert np.all((rows - 1000) % 3 == 0)           # external ids
    internal = g.to_internal(rows.ravel()).reshape(rows.shape)
    assert all(_is_embedding(g, q, r) for r in internal)
    assert len({tuple(r) for r in rows.tolist()}) == len(rows)
    if mode == "subgraphs":   # each distinct edge set once
        keys = {frozenset(frozenset((int(r[u]), int(r[w]))) for u, w in q.edges) for r in rows}
        assert len(keys) == len(rows)


def test_match_same_set_as_reference() -> None:
    g = _ba(40, 3, seed=1)
    for pattern in ["diamond", "square"]:
        a = {tuple(r) for b in wm.match(g, pattern) for r in b.tolist()}
        b = {tuple(r) for b in wm.match(g, pattern, backend="reference") for r in b.tolist()}
        assert a == b


def test_match_limit_and_batch_size() -> None:
    g = _ba(80, 4)
    total = wm.count(g, "triangle")
    batches = list(wm.match(g, "triangle", limit=25, batch_size=7))
    assert sum(len(b) for b in batches) == min(25, total)
    assert all(len(b) <= 7 for b in batches)
    assert list(wm.match(g, "triangle", limit=0)) == []
    assert sum(len(b) for b in wm.match(g, "triangle", limit=10 ** 9)) == total
    with pytest.raises(QueryError):
        wm.match(g, "triangle", limit=-1)
    with pytest.raises(QueryError):
        wm.match(g, "triangle", batch_size=0)


def test_match_labeled_columns() -> None:
    g = _ba(60, 4, seed=3, labels=3)
    q = wm.Query.parse("x:2-y:0, y-z:1")
    rows = np.concatenate(list(wm.match(g, q)) or [np.empty((0, 3), np.int64)])
    assert len(rows) == wm.count(g, q, backend="reference") > 0
    vl = g.vertex_labels[g.to_internal(rows.ravel()).reshape(rows.shape)]
    assert np.all(vl[:, 0] == 2) and np.all(vl[:, 1] == 0) and np.all(vl[:, 2] == 1)


# ----------------------------------------------------------------- anchors
def test_anchors_equal_filtered_embeddings() -> None:
    g = _ba(60, 3, seed=4, shift=70)
    q = wm.Query.parse("a-b, b-c, c-d, d-a")
    rows = np.concatenate(list(wm.match(g, q, backend="reference")))
    hubs_ext = g.to_external(np.argsort(g.degree)[-5:])
    other_ext = g.to_external(np.argsort(g.degree)[:20])
    want = int(np.isin(rows[:, 0], hubs_ext).sum())
    assert want > 0
    for backend in ("reference", "auto"):
        assert wm.count(g, q, anchors={"a": hubs_ext}, backend=backend) == want
        assert wm.count(g, q, anchors={"a": hubs_ext.tolist()}, backend=backend) == want
    both = int((np.isin(rows[:, 0], hubs_ext) & np.isin(rows[:, 2], other_ext)).sum())
    assert wm.count(g, q, anchors={"a": hubs_ext, "c": other_ext}) == both
    listed = np.concatenate(list(wm.match(g, q, anchors={"a": hubs_ext})))
    assert len(listed) == want and np.all(np.isin(listed[:, 0], hubs_ext))
    assert wm.count(g, q, anchors={0: hubs_ext}) == want         # by vertex index too
    assert wm.count(g, q, anchors={"a": int(hubs_ext[0])}) == int((rows[:, 0] == hubs_ext[0]).sum())


def test_anchors_prune_the_plan() -> None:
    """The anchored vertex's candidate set IS the anchor set: the search is pruned there."""
    g = _ba(200, 3, seed=6)
    q = wm.Query.parse("a-b, b-c, c-a")
    anchors = np.array([3, 17, 150])
    r = wm.count_result(g, q, anchors={"b": anchors})
    depth = int(r.plan.inverse_order[q.index_of("b")])
    cand = r.plan.candidates(depth)
    assert cand is not None and set(cand.tolist()) <= set(anchors.tolist())


def test_anchor_errors() -> None:
    g = _ba(30, 2, shift=10)
    with pytest.raises(GraphError, match="11"):
        wm.count(g, TRI, anchors={"a": [11]})     # 11 is not a file id
    with pytest.raises(QueryError, match="zz"):
        wm.count(g, TRI, anchors={"zz": [10]})
    with pytest.raises(QueryError):
        wm.count(g, TRI, anchors={"a": [10], 0: [13]})   # the same vertex twice


def test_empty_anchor_set_counts_zero() -> None:
    g = _ba(30, 2)
    assert wm.count(g, TRI, anchors={"a": []}) == 0
    assert list(wm.match(g, TRI, anchors={"a": np.array([], dtype=np.int64)})) == []
    assert wm.count(g, "triangle", anchors={0: []}) == 0      # named patterns: vertices 0..k-1


# ------------------------------------------------------------ error paths
def test_unknown_label_is_zero_with_warning() -> None:
    g = _ba(40, 3, labels=3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert wm.count(g, "a:99-b, b-c, c-a") == 0
    assert any(issubclass(x.category, UnknownLabelWarning) for x in w)


def test_disconnected_and_bad_queries() -> None:
    g = _ba()
    with pytest.raises(QueryError, match="disconnected"):
        wm.count(g, "a-b, c-d")
    with pytest.raises(QueryError):
        wm.count(g, "nosuchpattern")     # a bare word: an unknown pattern name
    with pytest.raises(QueryError, match="mode"):
        wm.count(g, "triangle", mode="everything")
    with pytest.raises(QueryError, match="directed"):
        wm.count(g, "a->b, b->c")
    with pytest.raises(FileNotFoundError):
        wm.count("/nonexistent/graph.txt", "triangle")
    with pytest.raises(TypeError):
        wm.count(12345, "triangle")


def test_query_larger_than_graph_counts_zero() -> None:
    g = wm.Graph.from_edges([0, 1], [1, 2])
    assert wm.count(g, "5-cycle") == 0
    assert list(wm.match(g, "5-cycle")) == []


def _gpu_usable() -> bool:
    try:
        from warpmatch.engine import get_engine
        return bool(get_engine("gpu").available()[0])
    except WarpmatchError:
        return False


@pytest.mark.skipif(_gpu_usable(), reason="a GPU is available here; the no-GPU error cannot occur")
def test_gpu_backend_without_gpu_is_a_clear_error() -> None:
    with pytest.raises(BackendUnavailableError) as e:
        wm.count(_ba(), "triangle", backend="gpu")
    assert "gpu" in str(e.value).lower()


def test_unknown_backend() -> None:
    with pytest.raises(WarpmatchError):
        wm.count(_ba(), "triangle", backend="quantum")


# ---------------------------------------------------------------- explain
def test_explain_mentions_query_and_anchor() -> None:
    g = _ba()
    text = wm.explain(g, "house", mode="subgraphs", anchors={"0": [1, 2]})
    assert "house" in text and "subgraphs" in text and "non-induced" in text and "anchor" in text
    assert len(text.splitlines()) > 5


# ------------------------------------------------------------ package API
def test_package_exports() -> None:
    from warpmatch._version import __version__
    assert wm.__version__ == __version__
    for name in ("count", "match", "explain", "read_graph", "Query", "Graph", "get_pattern"):
        assert hasattr(wm, name), name
    assert wm.Query.parse("a-b, b-c, c-a").k == 3


def test_docstring_examples_run() -> None:
    for mod in (api, wm):
        res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert res.failed == 0 and res.attempted > 0, mod.__name__


def test_every_named_pattern_counts_like_reference() -> None:
    g = _ba(30, 3, seed=12)
    for name, _desc in wm.list_patterns():
        q = wm.get_pattern(name)
        if q.k > 6:
            continue
        assert wm.count(g, q, mode="subgraphs") == wm.count(g, q, mode="subgraphs",
                                                            backend="reference"), name

