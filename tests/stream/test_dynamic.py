"""Tests of warpmatch.stream.dynamic: the dynamic graph store and its batch views.

The oracle is a plain Python model in *external* ids (a dict of edges per
state), written independently of the store: updates are judged one by one in
arrival order, new vertices are numbered in order of first appearance among
valid updates, and every state ``S_0..S_B`` of a batch is kept so that the
multi-version overlay can be checked state by state.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from warpmatch.errors import GraphError, InputFormatError
from warpmatch.graph.csr import Graph
from warpmatch.stream.dynamic import DynamicGraph
from warpmatch.stream.types import NEVER, Updates


# ====================================================================== model
class Model:
    """The graph as Python dicts in external ids."""

    def __init__(self, g: Graph) -> None:
        self.directed = g.directed
        self.has_elab = g.edge_labels is not None
        self.labeled = g.vertex_labels is not None
        self.ext = g.to_external(np.arange(g.n)).tolist()
        self.int_of = {e: i for i, e in enumerate(self.ext)}
        self.vlab = None if g.vertex_labels is None else g.vertex_labels.tolist()
        src, dst = g.edges()
        lab = g.edge_label_array()
        self.edges: dict[tuple[int, int], int] = {}
        for i, (u, v) in enumerate(zip(g.to_external(src).tolist(), g.to_external(dst).tolist())):
            self.edges[self.key(u, v)] = 0 if lab is None else int(lab[i])

    def key(self, u: int, v: int) -> tuple[int, int]:
        return (u, v) if self.directed or u <= v else (v, u)

    def run_batch(self, src, dst, op, lab, declared: dict[int, int], all_states: bool = True):
        """Judge a batch sequentially. Returns (codes, states, new_ext, undeclared_first).

        codes[i]: None (valid) or the reason word; undeclared_first: the first valid
        update that creates an undeclared vertex (labeled graphs); states[p] = edge dict of S_p
        (only ``[S_0, S_B]`` unless ``all_states``).
        """
        states = [dict(self.edges)]
        cur = dict(self.edges)
        codes = []
        new_ext: list[int] = []
        undeclared = None
        for i, (u, v, o, l) in enumerate(zip(src, dst, op, lab)):
            k = self.key(u, v)
            if u == v:
                codes.append("self-loop")
            elif o > 0 and k in cur:
                codes.append("insert of an existing edge")
            elif o < 0 and k not in cur:
                codes.append("delete of a missing edge")
            else:
                codes.append(None)
                if o > 0:
                    cur[k] = l
                else:
                    del cur[k]
                for x in (u, v):
                    if x not in self.int_of and x not in new_ext:
                        new_ext.append(x)
                        # only a vertex that a valid update creates needs a declaration
                        if self.labeled and x not in declared and undeclared is None:
                            undeclared = i
            if all_states:
                states.append(dict(cur))
        if not all_states:
            states.append(cur)
        return codes, states, new_ext, undeclared

    def commit(self, states, new_ext, declared) -> None:
        for x in new_ext:
            self.int_of[x] = len(self.ext)
            self.ext.append(x)
            if self.labeled:
                self.vlab.append(declared[x])
        self.edges = states[-1]

    def graph(self) -> Graph:
        keys = list(self.edges)
        src = [self.int_of[u] for u, _ in keys]
        dst = [self.int_of[v] for _, v in keys]
        return Graph.from_edges(
            np.array(src, np.int64), np.array(dst, np.int64), n=len(self.ext),
            vertex_labels=None if not self.labeled else np.array(self.vlab, np.int64),
            edge_labels=None if not self.has_elab else np.array(list(self.edges.values())),
            directed=self.directed, ids=np.array(self.ext, np.int64), warn=False)


def adjacency(edges: dict[tuple[int, int], int], directed: bool, x: int, out: bool):
    """{(neighbour, label)} of external vertex x in an edge dict."""
    res = set()
    for (u, v), l in edges.items():
        if directed:
            if out and u == x:
                res.add((v, l))
            if not out and v == x:
                res.add((u, l))
        else:
            if u == x:
                res.add((v, l))
            if v == x:
                res.add((u, l))
    return res


def graph_facts(g: Graph):
    ext = g.to_external(np.arange(g.n)).tolist()
    vl = None if g.vertex_labels is None else g.vertex_labels.tolist()
    src, dst = g.edges()
    el = g.edge_label_array()
    edges = set()
    for i, (u, v) in enumerate(zip(g.to_external(src).tolist(), g.to_external(dst).tolist())):
        if not g.directed and u > v:
            u, v = v, u
        edges.add((u, v, None if el is None else int(el[i])))
    return g.n, g.directed, ext, vl, edges, g.edge_labels is None


def assert_rows_sorted(dg: DynamicGraph) -> None:
    for v in range(dg.n):
        row = dg.neighbors(v)
        assert np.all(np.diff(row) > 0), f"row {v} not strictly sorted: {row}"
        inn = dg.in_neighbors(v)
        assert np.all(np.diff(inn) > 0)
        assert dg.degree(v) == row.size
    # rows beyond n are empty, regions inside the arrays and non-overlapping
    assert np.all(dg.b_deg[dg.n:] == 0)
    for pre in ("b_", "bi_"):
        start = getattr(dg, pre + "start")[:dg.n]
        cap = getattr(dg, pre + "cap")[:dg.n]
        deg = getattr(dg, pre + "deg")[:dg.n]
        assert np.all(deg <= cap)
        live = cap > 0
        order = np.argsort(start[live], kind="stable")
        s, c = start[live][order], cap[live][order]
        assert np.all(s[1:] >= s[:-1] + c[:-1]), "row regions overlap"
        if s.size:
            assert s[-1] + c[-1] <= getattr(dg, pre + "nbr").shape[0]


def assert_matches_model(dg: DynamicGraph, model: Model) -> None:
    snap = dg.snapshot()
    assert graph_facts(snap) == graph_facts(model.graph())
    assert dg.num_edges == len(model.edges) == snap.num_edges
    assert dg.n == len(model.ext)
    assert dg.to_external(np.arange(dg.n)).tolist() == model.ext
    if dg.n:
        assert dg.to_internal(np.array(model.ext)).tolist() == list(range(dg.n))
    assert_rows_sorted(dg)


def check_view(dg: DynamicGraph, view, batch, model: Model, states, valid_idx,
               new_ext) -> None:
    """Every state S_p of every vertex, read through the view, equals the model's."""
    n = batch.n_after
    ext_of = model.ext + list(new_ext)
    assert len(ext_of) == n
    assert view.n == n and view.o_idx.shape[0] == n and view.oi_idx.shape[0] == n
    if not dg.directed:
        assert view.bi_nbr is view.b_nbr and view.oi_idx is view.o_idx
        assert view.oi_ins is view.o_ins and view.bi_start is view.b_start
    # which rows the overlay must cover: endpoints of valid updates
    want_out = set(batch.src[valid_idx].tolist())
    want_in = set(batch.dst[valid_idx].tolist())
    if not dg.directed:
        want_out = want_in = want_out | want_in
    assert set(np.flatnonzero(view.o_idx >= 0).tolist()) == want_out
    assert set(np.flatnonzero(view.oi_idx >= 0).tolist()) == want_in
    assert view.o_off[-1] == view.o_nbr.size
    elab_ok = dg.has_edge_labels
    assert (view.o_elab.size > 0) == (elab_ok and view.o_nbr.size > 0)
    for out, (idx, off, nbr, elab, ins, dl, b_start, b_deg, b_nbr, b_elab) in (
            (True, (view.o_idx, view.o_off, view.o_nbr, view.o_elab, view.o_ins, view.o_dl,
                    view.b_start, view.b_deg, view.b_nbr, view.b_elab)),
            (False, (view.oi_idx, view.oi_off, view.oi_nbr, view.oi_elab, view.oi_ins,
                     view.oi_dl, view.bi_start, view.bi_deg, view.bi_nbr, view.bi_elab))):
        # inserted entries were inserted by a valid insert, deleted by a valid delete
        if nbr.size:
            assert np.all((ins == -1) | np.isin(ins, valid_idx))
            assert np.all((dl == NEVER) | np.isin(dl, valid_idx))
            assert np.all(ins < dl)
        for x in range(n):
            r = int(idx[x])
            if r < 0:
                s, d = int(b_start[x]), int(b_deg[x])
                row = b_nbr[s:s + d]
                labs = b_elab[s:s + d] if elab_ok else np.zeros(d, np.int32)
                got = {(ext_of[int(y)], int(l)) for y, l in zip(row, labs)}
                for p in range(len(states)):
                    assert got == adjacency(states[p], dg.directed, ext_of[x], out)
                continue
            lo, hi = int(off[r]), int(off[r + 1])
            keys = list(zip(nbr[lo:hi].tolist(), ins[lo:hi].tolist()))
            assert keys == sorted(keys), "overlay row not sorted by (nbr, ins)"
            for p in range(len(states)):
                alive = [j for j in range(lo, hi) if ins[j] < p <= dl[j]]
                got = {(ext_of[int(nbr[j])], int(elab[j]) if elab_ok else 0) for j in alive}
                assert len(got) == len(alive)
                assert got == adjacency(states[p], dg.directed, ext_of[x], out), (x, p)


# ================================================================= strategies
@st.composite
def scenarios(draw):
    directed = draw(st.booleans())
    vlabeled = draw(st.booleans())
    elabeled = draw(st.booleans())
    n = draw(st.integers(0, 7))
    ids = None
    if n and draw(st.booleans()):
        ids = np.array(draw(st.permutations(range(n)))) * 3 - 2     # includes -2 (allowed in ids)
    pairs = st.tuples(st.integers(0, max(n - 1, 0)), st.integers(0, max(n - 1, 0)))
    edges = draw(st.lists(pairs, max_size=18)) if n else []
    src = np.array([e[0] for e in edges], np.int64)
    dst = np.array([e[1] for e in edges], np.int64)
    vl = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))) if vlabeled else None
    el = (np.array(draw(st.lists(st.integers(0, 2), min_size=len(edges), max_size=len(edges))))
          if elabeled else None)
    g = Graph.from_edges(src, dst, n=n, vertex_labels=vl, edge_labels=el, directed=directed,
                         ids=ids, warn=False)
    existing = g.to_external(np.arange(n)).tolist()
    top = max(existing + [-1])
    fresh = [top + 1, top + 2, top + 5, max(1000, top + 10)]
    pool = existing + fresh
    es, ed = g.edges()
    old_pairs = list(zip(g.to_external(es).tolist(), g.to_external(ed).tolist()))
    pair = st.tuples(st.sampled_from(pool), st.sampled_from(pool))
    if old_pairs:
        pair = st.one_of(pair, st.sampled_from(old_pairs))
    upd = st.tuples(pair, st.sampled_from([1, -1]), st.integers(0, 2) if elabeled else st.just(0))
    batches = draw(st.lists(st.lists(upd, max_size=10), min_size=1, max_size=4))
    declared = {}
    if vlabeled:
        for x in fresh:
            if draw(st.integers(0, 9)) > 0:       # now and then one stays undeclared
                declared[x] = draw(st.integers(0, 2))
    slack = draw(st.sampled_from([0.0, 0.25, 1.0]))
    on_invalid = draw(st.sampled_from(["error", "skip"]))
    with_labels = elabeled or draw(st.booleans())
    return g, batches, declared, slack, on_invalid, with_labels


def make_updates(batch, declared, first_line: int, with_labels: bool) -> Updates:
    src = np.array([b[0][0] for b in batch], np.int64)
    dst = np.array([b[0][1] for b in batch], np.int64)
    op = np.array([b[1] for b in batch], np.int8)
    lab = np.array([b[2] for b in batch], np.int32) if with_labels else None
    line = np.arange(first_line, first_line + 2 * len(batch), 2, dtype=np.int64)
    return Updates(src, dst, op, lab, None, line, "stream.txt",
                   np.array(list(declared), np.int64),
                   np.array(list(declared.values()), np.int32))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_batches_match_python_model(sc):
    g, batches, declared, slack, on_invalid, with_labels = sc
    dg = DynamicGraph(g, slack=slack)
    model = Model(g)
    assert_matches_model(dg, model)
    line = 1
    for raw in batches:
        ups = make_updates(raw, declared, line, with_labels)
        line += 100
        src, dst = ups.src.tolist(), ups.dst.tolist()
        lab = [0] * len(raw) if ups.label is None else ups.label.tolist()
        codes, states, new_ext, undeclared = model.run_batch(src, dst, ups.op.tolist(), lab,
                                                             declared)
        bad = [i for i, c in enumerate(codes) if c is not None]
        if undeclared is not None and on_invalid == "error" and bad and bad[0] < undeclared:
            undeclared = None                         # the earlier problem is reported
        if undeclared is not None or (on_invalid == "error" and bad):
            first = undeclared if undeclared is not None else bad[0]
            event("undeclared vertex" if undeclared is not None else "invalid update raised")
            with pytest.raises(InputFormatError) as exc:
                dg.prepare(ups, on_invalid)
            assert exc.value.line == int(ups.line[first])
            assert exc.value.path == "stream.txt"
            if undeclared is None:
                assert codes[first] in str(exc.value)
            else:
                assert "declaration" in str(exc.value)
            assert_matches_model(dg, model)          # nothing changed
            continue
        batch = dg.prepare(ups, on_invalid)
        assert batch.valid.tolist() == [c is None for c in codes]
        for i, c in enumerate(codes):
            assert (batch.reason[i] == "") == (c is None)
            if c is not None:
                assert batch.reason[i].startswith(c)
        # internal ids as the model numbers them (-1: vertex only an invalid update names)
        int_of = dict(model.int_of)
        for k, x in enumerate(new_ext):
            int_of[x] = len(model.ext) + k
        assert batch.src.tolist() == [int_of.get(x, -1) for x in src]
        assert batch.dst.tolist() == [int_of.get(x, -1) for x in dst]
        assert batch.n_before == len(model.ext)
        assert batch.n_after == len(model.ext) + len(new_ext)
        if g.vertex_labels is not None:
            assert batch.new_vertex_labels.tolist() == [declared[x] for x in new_ext]
        assert batch.elabel.tolist() == lab
        valid_idx = np.flatnonzero(batch.valid)
        event(f"skipped updates: {min(len(bad), 2)}")
        event(f"new vertices: {min(len(new_ext), 2)}")
        view = dg.view(batch)
        if g.vertex_labels is not None:
            assert view.vlabel.tolist() == model.vlab + [declared[x] for x in new_ext]
        else:
            assert view.vlabel.size == 0
        check_view(dg, view, batch, model, states, valid_idx, new_ext)
        # the overlay rows the view names are those o_idx maps (what the GPU engine reads)
        for rows, idx in ((view.o_rows, view.o_idx), (view.oi_rows, view.oi_idx)):
            assert np.array_equal(rows, np.flatnonzero(np.asarray(idx) >= 0))
        caps = dg.b_cap.copy()
        dg.apply(batch)
        if np.any(dg.b_cap[:caps.size] != caps):
            event("a row relocated")
        model.commit(states, new_ext, declared)
        assert_matches_model(dg, model)


# ================================================================= unit tests
def ups(rows, **kw) -> Updates:
    src = np.array([r[0] for r in rows], np.int64)
    dst = np.array([r[1] for r in rows], np.int64)
    op = np.array([r[2] for r in rows], np.int8)
    lab = np.array([r[3] for r in rows], np.int32) if rows and len(rows[0]) > 3 else None
    return Updates(src, dst, op, lab, **kw)


def run(dg: DynamicGraph, rows, on_invalid="error", **kw):
    b = dg.prepare(ups(rows, **kw), on_invalid)
    v = dg.view(b)
    dg.apply(b)
    return b, v


def test_insert_then_delete_in_one_batch_and_timestamps():
    dg = DynamicGraph(Graph.from_edges([0, 1], [1, 2]))
    b = dg.prepare(ups([(0, 2, 1), (0, 2, -1), (2, 0, 1), (0, 1, -1)]))
    assert b.valid.all()
    v = dg.view(b)
    r = v.o_idx[0]
    lo, hi = v.o_off[r], v.o_off[r + 1]
    entries = list(zip(v.o_nbr[lo:hi].tolist(), v.o_ins[lo:hi].tolist(), v.o_dl[lo:hi].tolist()))
    # 1: present before, deleted by update 3; 2: two lifetimes (0..1) and (2..)
    assert entries == [(1, -1, 3), (2, 0, 1), (2, 2, int(NEVER))]
    dg.apply(b)
    assert dg.neighbors(0).tolist() == [2]
    assert dg.num_edges == 2


def test_skip_reports_reasons_and_changes_nothing():
    g = Graph.from_edges([0], [1], directed=True)
    dg = DynamicGraph(g)
    before = graph_facts(dg.snapshot())
    b = dg.prepare(ups([(0, 1, 1), (1, 0, -1), (2, 2, 1), (1, 0, 1)]), "skip")
    assert b.valid.tolist() == [False, False, False, True]
    assert b.reason[0].startswith("insert of an existing edge")
    assert b.reason[1].startswith("delete of a missing edge")
    assert b.reason[2].startswith("self-loop")
    # vertex 2 is mentioned only by the skipped self-loop: not created
    assert b.src.tolist()[2] == -1 and b.n_after == 2
    dg.apply(b)
    assert dg.n == 2 and dg.has_edge(1, 0) and dg.num_edges == 2
    assert graph_facts(dg.snapshot()) != before


def test_error_names_line_and_text_and_changes_nothing():
    g = Graph.from_edges([0, 1], [1, 2], ids=[10, 20, 30])
    dg = DynamicGraph(g)
    with pytest.raises(InputFormatError) as exc:
        dg.prepare(ups([(10, 30, 1), (20, 10, 1)], line=np.array([4, 7]), source="u.txt"))
    assert exc.value.line == 7 and "insert of an existing edge" in str(exc.value)
    assert "20 10 +" in str(exc.value) and str(exc.value).startswith("u.txt:7:")
    with pytest.raises(InputFormatError, match="update 2: delete of a missing edge"):
        dg.prepare(ups([(10, 30, 1), (30, 20, -1), (30, 20, -1)]))
    assert dg.num_edges == 2 and dg.n == 3


def test_edge_label_rules():
    dg = DynamicGraph(Graph.from_edges([0], [1]))
    with pytest.raises(InputFormatError, match="no edge labels"):
        dg.prepare(ups([(1, 2, 1, 3)]))
    # without timestamps, a 4th field read as a label may be a timestamp: say how to say so
    with pytest.raises(InputFormatError, match=r"no edge labels \(if the 4th field is a "
                                               r"timestamp.*--no-update-labels"):
        dg.prepare(ups([(1, 2, 1, 3)], line=np.array([1]), source="u.txt"))
    with pytest.raises(InputFormatError) as exc:
        dg.prepare(ups([(1, 2, 1, 3)], time=np.array([5])))
    assert "timestamp" not in str(exc.value)
    b, _ = run(dg, [(1, 2, 1, 0)])          # label 0 is fine
    assert dg.has_edge(2, 1) and dg.edge_label(1, 2) is None
    dl = DynamicGraph(Graph.from_edges([0], [1], edge_labels=[5]))
    with pytest.raises(InputFormatError, match="negative edge label"):
        dl.prepare(ups([(1, 2, 1, -1)]))
    # a deletion's label does not have to match the stored one
    b, v = run(dl, [(1, 0, -1, 9), (0, 1, 1, 7)])
    r = v.o_idx[0]
    lo = v.o_off[r]
    assert v.o_elab[lo:lo + 2].tolist() == [5, 7]
    assert dl.edge_label(1, 0) == 7


def test_new_vertices_unlabeled_implicit_and_identity_kept():
    dg = DynamicGraph(Graph.from_edges([0, 1], [1, 2]))
    run(dg, [(2, 3, 1), (4, 3, 1)])
    assert dg.n == 5 and dg.ids is None
    assert dg.snapshot().ids is None
    run(dg, [(100, 0, 1)])                  # not the next id: ids become explicit
    assert dg.n == 6 and dg.to_external([5]).tolist() == [100]
    snap = dg.snapshot()
    assert snap.ids.tolist() == [0, 1, 2, 3, 4, 100]
    assert snap.has_edge(5, 0)
    with pytest.raises(InputFormatError, match="negative vertex id"):
        dg.prepare(ups([(-3, 0, 1)]))
    with pytest.raises(GraphError, match="7 is not a vertex"):
        dg.to_internal([0, 7])


def test_new_vertices_labeled_need_declarations():
    g = Graph.from_edges([0], [1], vertex_labels=[3, 4], ids=[7, 8])
    dg = DynamicGraph(g)
    with pytest.raises(InputFormatError, match="no declaration"):
        dg.prepare(ups([(7, 9, 1)], line=np.array([12]), source="s"))
    decl = dict(new_vertex_ids=np.array([9, 11, 7]), new_vertex_labels=np.array([5, 6, 3]))
    b, v = run(dg, [(7, 9, 1)], **decl)
    assert b.new_vertex_labels.tolist() == [5] and v.vlabel.tolist() == [3, 4, 5]
    assert dg.vertex_labels.tolist() == [3, 4, 5] and dg.to_internal([9]).tolist() == [2]
    # the same declarations again (Updates.slice keeps them whole): fine
    run(dg, [(9, 11, 1)], **decl)
    assert dg.vertex_labels.tolist() == [3, 4, 5, 6]
    with pytest.raises(InputFormatError, match="declared with label 4 but has label 3"):
        dg.prepare(ups([(7, 8, -1)], new_vertex_ids=np.array([7]),
                       new_vertex_labels=np.array([4])))
    with pytest.raises(InputFormatError, match="declared twice"):
        dg.prepare(ups([(7, 8, -1)], new_vertex_ids=np.array([20, 20]),
                       new_vertex_labels=np.array([1, 2])))


def test_labeled_invalid_update_at_unknown_vertex_needs_no_declaration():
    # deleting an edge at an unknown vertex is a delete of a missing edge: it creates no
    # vertex, so it is skipped (or reported as such), not a missing declaration
    g = Graph.from_edges([0], [1], vertex_labels=[3, 4], ids=[7, 8])
    dg = DynamicGraph(g)
    b, _ = run(dg, [(99, 7, -1), (7, 8, 1), (98, 98, 1), (7, 8, -1)], "skip")
    assert b.valid.tolist() == [False, False, False, True] and b.n_after == 2
    assert b.reason[0].startswith("delete of a missing edge")
    with pytest.raises(InputFormatError, match="update 0: delete of a missing edge"):
        dg.prepare(ups([(99, 7, -1)]))
    # the first problem in arrival order is reported: here the undeclared new vertex
    with pytest.raises(InputFormatError, match="update 0: vertex 50 is new .* no declaration"):
        dg.prepare(ups([(7, 50, 1), (99, 7, -1)]))
    # ... and here the invalid update; declared vertices beside undeclared ones work
    with pytest.raises(InputFormatError, match="update 0: delete of a missing edge"):
        dg.prepare(ups([(99, 7, -1), (7, 50, 1)]))
    decl = dict(new_vertex_ids=np.array([60]), new_vertex_labels=np.array([5]))
    with pytest.raises(InputFormatError, match="update 1: vertex 61 is new"):
        dg.prepare(ups([(60, 7, 1), (60, 61, 1)], **decl))
    assert dg.n == 2 and dg.num_edges == 0


def test_relocation_growth_and_compaction():
    calls = []

    def allocator(count, dtype):
        arr = np.empty(count, dtype)
        calls.append(arr)
        return arr

    g = Graph.from_edges(np.arange(50), np.arange(1, 51), directed=True)
    dg = DynamicGraph(g, slack=0.0, allocator=allocator)
    v0 = dg.storage_version
    rng = np.random.default_rng(1)
    model = Model(g)
    for _ in range(30):
        # a hub gains edges (relocates repeatedly), random rows churn
        hub = [(0, int(x), 1) for x in rng.choice(np.arange(2, 200), 6, replace=False)
               if (0, int(x)) not in model.edges]
        cur = list(model.edges)
        dels = [(u, v, -1) for u, v in (cur[i] for i in rng.choice(len(cur), 3, replace=False))
                if u != 0]
        rows = hub + dels
        codes, states, new_ext, _ = model.run_batch(
            [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
            [0] * len(rows), {})
        assert all(c is None for c in codes)
        run(dg, rows)
        model.commit(states, new_ext, {})
    assert dg.storage_version > v0                     # vertex/edge arrays were replaced
    assert dg.wasted_fraction() <= 0.5
    assert_matches_model(dg, model)
    allocated = {id(a) for a in calls}
    for name, arr in dg.storage_arrays().items():
        assert id(arr) in allocated, name


def test_compaction_happens():
    g = Graph.from_edges(np.zeros(200, np.int64), np.arange(1, 201), edge_labels=np.arange(200))
    dg = DynamicGraph(g, slack=0.0)
    old_nbr = dg.b_nbr
    v = dg.storage_version
    # growing rows relocate (doubling) without compacting
    b, _ = run(dg, [(i, i + 1, 1, 7) for i in range(1, 200, 2)])
    assert dg.storage_version == v and dg.b_nbr is old_nbr
    assert 0 < dg.wasted_fraction() <= 0.5
    # deleting most of the hub's edges wastes most of the store: rebuilt compactly
    b, view = run(dg, [(0, i, -1) for i in range(1, 181)])
    assert dg.storage_version == v + 1 and dg.b_nbr is not old_nbr
    assert dg.wasted_fraction() == 0.0
    assert view.b_nbr is old_nbr                    # the view read the pre-batch arrays
    assert dg.neighbors(0).tolist() == list(range(181, 201))
    assert dg.edge_label(0, 190) == 189 and dg.edge_label(3, 4) == 7
    assert_rows_sorted(dg)
    assert dg.num_edges == 200 + 100 - 180
    snap = dg.snapshot()
    assert snap.num_edges == dg.num_edges and snap.edge_labels is not None


def test_view_of_batch_from_other_state_is_refused():
    dg = DynamicGraph(Graph.from_edges([0], [1]))
    b1 = dg.prepare(ups([(1, 2, 1)]))
    b2 = dg.prepare(ups([(0, 2, 1)]))
    dg.apply(b1)
    with pytest.raises(ValueError, match="prepare it again"):
        dg.view(b2)
    other = DynamicGraph(Graph.from_edges([0], [1]))
    with pytest.raises(ValueError, match="not prepared"):
        other.apply(dg.prepare(ups([(0, 2, 1)])))


def test_empty_batch_and_pending_external_ids():
    dg = DynamicGraph(Graph.from_edges([0], [1], ids=[5, 6]))
    b = dg.prepare(ups([]))
    v = dg.view(b)
    assert v.o_off.tolist() == [0] and np.all(v.o_idx == -1) and v.num_updates == 0
    dg.apply(b)
    b = dg.prepare(ups([(6, 40, 1), (41, 40, 1)]))
    assert dg.to_external([0, 2, 3], batch=b).tolist() == [5, 40, 41]
    with pytest.raises(GraphError):
        dg.to_external([2])                 # not a vertex until the batch is applied
    dg.apply(b)
    assert dg.to_external([[0, 2], [3, 1]]).tolist() == [[5, 40], [41, 6]]


@pytest.mark.parametrize("directed", [False, True])
def test_large_batches_against_set_model(directed):
    """4096-update batches on a 20k-edge power-law-ish graph (hubs relocate)."""
    rng = np.random.default_rng(7)
    n = 3000
    src = (rng.pareto(1.2, 20_000) * 5).astype(np.int64) % n
    dst = rng.integers(0, n, 20_000)
    g = Graph.from_edges(src, dst, n=n, directed=directed, ids=np.arange(n) * 2 + 1,
                         edge_labels=rng.integers(0, 3, 20_000), warn=False)
    dg = DynamicGraph(g, slack=0.1)
    model = Model(g)
    for _ in range(3):
        cur = list(model.edges)
        pick = rng.choice(len(cur), 1500, replace=False)
        rows = [(cur[i][0], cur[i][1], -1, 0) for i in pick]
        s_new = (rng.pareto(1.2, 2596) * 5).astype(np.int64) % (n + 20) * 2 + 1
        d_new = rng.integers(0, n + 20, 2596) * 2 + 1
        rows += [(int(a), int(b), 1, int(c)) for a, b, c in
                 zip(s_new, d_new, rng.integers(0, 3, 2596))]
        rows = [rows[i] for i in rng.permutation(len(rows))]
        u = ups(rows)
        codes, states, new_ext, _ = model.run_batch(
            u.src.tolist(), u.dst.tolist(), u.op.tolist(), u.label.tolist(), {},
            all_states=False)
        b = dg.prepare(u, "skip")
        assert b.valid.tolist() == [c is None for c in codes]
        v = dg.view(b)
        # spot-check the final state of every overlay row against the model
        ext_of = model.ext + new_ext
        final: dict[int, set] = {}
        for (a, c), lab in states[-1].items():
            final.setdefault(a, set()).add((c, lab))
            if not directed:
                final.setdefault(c, set()).add((a, lab))
        for x in np.flatnonzero(v.o_idx >= 0)[:300]:
            r = v.o_idx[x]
            sl = slice(v.o_off[r], v.o_off[r + 1])
            alive = v.o_dl[sl] == NEVER
            got = {(ext_of[y], int(lab)) for y, lab in zip(v.o_nbr[sl][alive], v.o_elab[sl][alive])}
            assert got == final.get(ext_of[x], set())
        dg.apply(b)
        model.commit(states, new_ext, {})
    assert_matches_model(dg, model)
