"""Delta plans compiled per query (stream/_seq_special.py): the interpreter's counts exactly.

Checked: per-update counts with ``specialise="always"`` against static recounts of
every state (the oracle of test_matcher.py) and against the interpreting kernel
(``specialise="never"``), with compiled plans really in use (their addresses in the
kernel's table); labels, edge labels, directed, induced, both modes, batch sizes;
the queries whose shapes take each generated branch (the endpoints' buffer, two
group vertices, tagged fixed rows, groups of several sets with kept counts; three
group vertices that may coincide left to the interpreter), the tag
block's counter wrap and growth, a group product's int64 overflow; the ``auto`` policy's
background compile; the disk cache; bad settings.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.query.model import Query
from warpmatch.query.patterns import get_pattern
from warpmatch.stream import _seq_compile as SC
from warpmatch.stream import _seq_special as SP
from warpmatch.stream import sequential as SQ
from warpmatch.stream.cpu import CpuDeltaEngine
from warpmatch.stream.delta import compile_delta_plans
from warpmatch.stream.matcher import ContinuousMatcher

from test_matcher import random_stream, replay, with_labels
from test_sequential import DIRECTED, UNDIRECTED, counts, known_stream, labeled_query, state

SETTINGS = dict(max_examples=12, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.function_scoped_fixture])

# beyond test_sequential's: two group vertices that may coincide (the 4-path, a
# tailed triangle), the endpoints' buffer used twice (a 5-clique: its last depth tags the
# buffer and m2's row), a fixed row tagged (the square), a group counted once per
# vertex it depends on and corrected later (the triangle with two tails); groups of
# several sets: test_groups_of_several_sets_and_kept_counts
EXTRA_UNDIRECTED = ["a-b, b-c, c-d, a-e", "a-b, b-c, c-a, c-d",
                    "a-b, a-c, a-d, a-e, b-c, b-d, b-e, c-d, c-e, d-e", "a-b, b-c, c-d, d-a",
                    "a-b, b-c, c-a, a-d, b-e"]


@pytest.fixture(autouse=True)
def plan_cache(tmp_path_factory, monkeypatch):
    """Compiled modules in a directory of this test session (not the user's cache)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg"))


def matcher(g0, q, specialise: str, **kw) -> ContinuousMatcher:
    return ContinuousMatcher(g0, q, backend="cpu", on_invalid="skip", threads=1,
                             specialise=specialise, **kw)


def compiled(cm: ContinuousMatcher) -> list[int]:
    seq = cm._sequential_path()
    assert seq is not None
    return [] if seq.special is None else list(seq.special.plans)


@settings(**SETTINGS)
@given(seed=st.integers(0, 10**6), directed=st.booleans(), vlab=st.sampled_from([0, 2, 3]),
       elab=st.sampled_from([0, 2]), induced=st.booleans(),
       mode=st.sampled_from(["embeddings", "subgraphs"]), qi=st.integers(0, 9),
       batch=st.sampled_from([1, 7, 64]))
def test_compiled_plans_against_oracle_and_interpreter(seed, directed, vlab, elab, induced,
                                                       mode, qi, batch):
    oracle, ups = known_stream(seed, directed, vlab, elab)
    texts = DIRECTED if directed else UNDIRECTED + EXTRA_UNDIRECTED
    qi %= len(texts)
    if vlab == 3:
        q = labeled_query(seed, directed, 3, texts, qi, elab)
    else:
        q = with_labels(Query.parse(texts[qi]), seed, vlab, elab, directed=directed)
    g0 = oracle.graph()
    kw = dict(mode=mode, induced=induced)
    cm_c = matcher(g0, q, "always", **kw)
    cm_i = matcher(g0, q, "never", **kw)
    seq = cm_c._sequential_path()
    assert np.array_equal(seq._sp_addr != 0,
                          np.isin(np.arange(seq.plans.num_plans), compiled(cm_c)))
    assert compiled(cm_i) == []
    got_c = counts(cm_c, ups, batch)
    got_i = counts(cm_i, ups, batch)
    for a, b in zip(got_c[:3], got_i[:3]):
        assert np.array_equal(a, b)
    sets, valid = replay(oracle, ups, q, mode, induced)
    for i in range(len(ups)):
        plus, minus = sets[i + 1] - sets[i], sets[i] - sets[i + 1]
        assert (got_c[0][i], got_c[1][i]) == (len(plus), len(minus)), i
    assert cm_c.count == cm_i.count == len(sets[-1])
    assert state(cm_c) == state(cm_i)


@pytest.mark.parametrize("text,directed,compiles", [
    ("a-b, b-c, c-a", False, True),                       # one scan of two rows
    ("a-b, b-c, c-a, a-d, b-d, c-d", False, True),        # the endpoints' buffer
    # the buffer and the row of m2 tagged, m3's row drives
    ("a-b, a-c, a-d, a-e, b-c, b-d, b-e, c-d, c-e, d-e", False, True),
    ("a-b, b-c, c-d, a-e", False, True),                  # two group vertices
    ("a-b, b-c, c-d, d-a", False, True),                  # a fixed row, tagged
    ("a->b, b->c, a->c, a->d, b->d, c->d", True, True),   # directions in the buffer
    ("a-b, b-c, c-d, d-a, a-e, b-e", False, "some"),      # the house: path plans stay
])
@pytest.mark.parametrize("seed", [4, 5])
def test_shapes_that_compile_count_exactly(text, directed, compiles, seed):
    oracle, ups = known_stream(seed, directed, 0, 2, n=14, m=40, B=80, invalid=False)
    q = Query.parse(text)
    if directed:
        q = Query(q.k, q.edges, q.edge_labels, q.vertex_labels, directed=True, names=q.names)
    q = with_labels(q, seed, 0, 2, directed=directed)
    g0 = oracle.graph()
    cm_c = matcher(g0, q, "always")
    n_plans = cm_c._sequential_path().plans.num_plans
    got_n = len(compiled(cm_c))
    assert (0 < got_n < n_plans) if compiles == "some" else bool(got_n) == compiles
    got = counts(cm_c, ups, 16)
    ref = counts(matcher(g0, q, "never"), ups, 16)
    for a, b in zip(got[:3], ref[:3]):
        assert np.array_equal(a, b)
    sets, _ = replay(oracle, ups, q, "embeddings", False)
    assert [int(x) for x in got[0]] == [len(sets[i + 1] - sets[i]) for i in range(len(ups))]


def test_auto_compiles_in_the_background_and_switches(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))    # nothing compiled yet
    monkeypatch.setattr(SC, "_LOADED", {})
    monkeypatch.setattr(SQ, "SPECIALISE_AFTER_S", 0.0)
    oracle, ups = known_stream(11, False, 0, 0, n=14, m=40, B=120, invalid=False)
    q = get_pattern("4-clique")
    g0 = oracle.graph()
    cm = matcher(g0, q, "auto")
    seq = cm._sequential_path()
    assert seq.special is None and not SC.is_cached(seq.plans, False)
    got = []
    for d in cm.apply_batches(ups, 10, counts_only=True):
        got.append(d.plus_counts + d.minus_counts)
        if seq._compiling is not None:
            seq._compiling.join()         # (the test waits; a stream would go on)
    assert seq.special is not None and seq.special.plans == [0]
    assert (seq._sp_addr != 0).all()
    ref = counts(matcher(g0, q, "never"), ups, 10)
    assert np.array_equal(np.concatenate(got), ref[0] + ref[1])
    # a new matcher of the same query finds the module compiled: no wait, no thread
    assert SC.is_cached(seq.plans, False)
    cm2 = matcher(g0, q, "auto")
    assert compiled(cm2) == [0] and cm2._sequential_path()._compiling is None


def test_modules_are_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(SC, "_LOADED", {})          # as in a new process
    plans = compile_delta_plans(get_pattern("diamond"))
    src, take = SP.module_source(plans, False)
    assert take and "def plan_" in src and not SC.is_cached(plans, False)
    first = SC.compile_plans(plans, False)
    assert not first.cached and first.path.parent.parent == SC.cache_dir()
    assert (first.addr != 0).sum() == len(take)
    # another process (here: the module table cleared) loads numba's cache files
    monkeypatch.setattr(SC, "_LOADED", {})
    again = SC.compile_plans(plans, False)
    assert again.cached and again.plans == first.plans
    # the same source in this process: the same functions
    assert SC.compile_plans(plans, False) is again


def test_what_is_not_compiled():
    plans = compile_delta_plans(get_pattern("house"))
    _src, take = SP.module_source(plans, False)
    path = SP.path_plans(plans)
    assert path.any() and not any(path[j] for j in take)   # path plans stay interpreted
    assert not any(SP.plan_eligible(plans, j, False) for j in np.flatnonzero(path))
    # three group vertices whose candidates may coincide (an unlabelled star's leaves):
    # the interpreter's partitions count them
    star = compile_delta_plans(Query.parse("a-b, a-c, a-d, a-e"))
    assert any(int(star.k - star.group_start[j]) >= 3 for j in range(star.num_plans))
    assert not any(SP.plan_eligible(star, j, False) for j in range(star.num_plans)
                   if int(star.k - star.group_start[j]) >= 3)
    # a row fixed across a deeper loop is tagged (the square; the 4-clique's buffer)
    for name in ("square", "4-clique"):
        src, take = SP.module_source(compile_delta_plans(get_pattern(name)), False)
        assert take == [0] and "TAG_ROWS = 1" in src and "st32(tb_" in src
    assert SP.module_source(plans, True)[1] == []      # local candidate spaces: none
    listing = compile_delta_plans(get_pattern("triangle"), purpose="list")
    assert SP.module_source(listing, False)[1] == []


def test_bad_setting_is_an_error(monkeypatch):
    with pytest.raises(ValueError, match="specialise"):
        CpuDeltaEngine(specialise="sometimes")
    monkeypatch.setenv("WARPMATCH_CPU_SPECIALISE", "yes")
    with pytest.raises(ValueError, match="WARPMATCH_CPU_SPECIALISE"):
        CpuDeltaEngine()
    monkeypatch.setenv("WARPMATCH_CPU_SPECIALISE", "never")
    assert CpuDeltaEngine().specialise == "never"


@pytest.mark.parametrize("name", ["square", "5-clique"])
def test_tags_survive_counter_wrap_and_new_vertices(name):
    """The tag block: a counter at the int32 limit starts its row again (a stream over
    G_0's vertices: the block stays), and a batch with new vertices (the batch path's)
    gives a larger block before the next compiled search."""
    q = get_pattern(name)
    oracle, ups = known_stream(21, False, 0, 0, n=14, m=45, B=120, invalid=False)
    g0 = oracle.graph()
    cm_c = matcher(g0, q, "always")
    seq = cm_c._sequential_path()
    assert seq.special is not None and seq.special.tag_rows >= 1
    stride = int(seq._sp_tag[1])
    assert seq._sp_tag[0] == seq._tags.ctypes.data and stride >= g0.n + 1
    for r in range(seq.special.tag_rows):      # every row's counter at the limit
        seq._tags[r * stride + stride - 1] = 2147482999
    got = counts(cm_c, ups, 8)
    ref = counts(matcher(g0, q, "never"), ups, 8)
    for a, b in zip(got[:3], ref[:3]):
        assert np.array_equal(a, b)
    assert cm_c.count == len(replay(oracle, ups, q, "embeddings", False)[0][-1])
    assert int(seq._sp_tag[1]) == stride        # the same block: its first row wrapped
    assert 0 < int(seq._tags[stride - 1]) < 2147482999
    # new vertices: the block grows with the graph
    oracle, ups = random_stream(21, False, 0, 0, n=14, m=45, B=160, invalid=False,
                                new_vertices=True)
    g0 = oracle.graph()
    cm_c = matcher(g0, q, "always")
    seq = cm_c._sequential_path()
    got = counts(cm_c, ups, 8)
    ref = counts(matcher(g0, q, "never"), ups, 8)
    for a, b in zip(got[:3], ref[:3]):
        assert np.array_equal(a, b)
    assert cm_c.count == len(replay(oracle, ups, q, "embeddings", False)[0][-1])
    assert cm_c._dg.n > g0.n and int(seq._sp_tag[1]) >= cm_c._dg.n + 1


GROUPS = ["a-b, b-c, c-a, a-d, b-e", "a-b, b-c, c-d, d-e, c-f, b-g, d-a",
          "a-b, a-c, a-d, a-e, b-c"]


@pytest.mark.parametrize("text,seed,vlab", [
    (GROUPS[0], 3, 0), (GROUPS[0], 6, 0), (GROUPS[0], 3, 3), (GROUPS[0], 6, 3),
    (GROUPS[2], 3, 0), (GROUPS[2], 3, 3), (GROUPS[1], 3, 3)])
def test_groups_of_several_sets_and_kept_counts(text, seed, vlab):
    """Counting groups of several sets (labels keep their candidates apart), counts kept
    while the vertex they depend on stays and corrected for later core vertices: the
    interpreter's counts, the oracle's (where it is quick: 5 vertices), and the static
    count of the final graph."""
    oracle, ups = known_stream(seed, False, vlab, 0, n=13, m=42, B=90, invalid=False)
    q = (labeled_query(seed * 37 + 5, False, 3, GROUPS, GROUPS.index(text), 0) if vlab
         else Query.parse(text))
    g0 = oracle.graph()
    cm_c = matcher(g0, q, "always")
    plans = cm_c._sequential_path().plans
    assert np.array_equal(cm_c._sequential_path()._sp_addr != 0,
                          np.isin(np.arange(plans.num_plans), compiled(cm_c)))
    got = counts(cm_c, ups, 9)
    ref = counts(matcher(g0, q, "never"), ups, 9)
    for a, b in zip(got[:3], ref[:3]):
        assert np.array_equal(a, b)
    assert cm_c.count == wm.count(cm_c.graph.snapshot(), q)
    if q.k <= 5:
        sets, _ = replay(oracle, ups, q, "embeddings", False)
        assert [int(x) for x in got[0]] == [len(sets[i + 1] - sets[i])
                                            for i in range(len(ups))]
        assert [int(x) for x in got[1]] == [len(sets[i] - sets[i + 1])
                                            for i in range(len(ups))]


def test_group_shapes_the_generator_takes():
    """The triangle with a tail on two corners: some plan's group depends on an endpoint
    only, below the last core depth, and is counted once and corrected; the tree with
    distinct leaf labels: groups of several sets compile (the generated sources)."""
    plans = compile_delta_plans(Query.parse("a-b, b-c, c-a, a-d, b-e"))
    take = SP.module_source(plans, False)[1]
    assert take and any("if not h" in SP._Gen(plans, j).source("f") for j in take)
    q = Query.parse(GROUPS[1])
    q = Query(q.k, q.edges, q.edge_labels, np.arange(q.k, dtype=np.int32), names=q.names)
    plans = compile_delta_plans(q)
    take = SP.module_source(plans, False)[1]
    gens = [SP._Gen(plans, j) for j in take]
    assert len(take) == plans.num_plans and any(len(g.comps()) >= 2 for g in gens)


def test_compiled_group_product_overflow_raises():
    """A group's product past int64 (a star's six other leaves, 2,000 candidates each:
    2000^6 > 2^63) raises OverflowError from the compiled plan as from the interpreter,
    and nothing of the batch is applied."""
    from warpmatch.graph.csr import Graph
    leaves, per = 7, 2000
    n = 2 + leaves * per                      # the hub, its leaves, one spare leaf
    dst = np.arange(1, 1 + leaves * per)
    vl = np.concatenate([[0], 1 + (dst - 1) // per, [1]]).astype(np.int32)
    g0 = Graph.from_edges(np.zeros_like(dst), dst, n=n, vertex_labels=vl)
    star = Query.parse(", ".join(f"a-{chr(98 + i)}" for i in range(leaves)))
    q = Query(star.k, star.edges, star.edge_labels, np.arange(star.k, dtype=np.int32),
              names=star.names)
    for mode in ("always", "never"):
        cm = ContinuousMatcher(g0, q, backend="cpu", threads=1, specialise=mode,
                               count_initial=False)
        assert bool(compiled(cm)) == (mode == "always")
        with pytest.raises(OverflowError):
            cm.apply([(0, n - 1, "+")], counts_only=True)
        assert cm.updates_applied == 0 and cm.graph.num_edges == leaves * per
