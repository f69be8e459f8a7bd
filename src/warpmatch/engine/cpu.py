"""The ``cpu`` engine: parallel backtracking with sorted-list intersections in numba.

It executes a :class:`~warpmatch.plan.Plan` by the depth-first backtracking of
RI (Bonnici et al. 2013, Alg. 1), generating each depth's candidates by
intersecting the sorted adjacency lists of the matched backward neighbours
(galloping cursors, see :mod:`warpmatch.engine._cpu_kernels`). This module is
the Python side: it prepares read-only array bundles, splits the roots into
balanced work items, and drives the kernels in short resumable calls.

Bounded calls (why the search is driven from Python): a numba parallel region
cannot be interrupted, and one call over all the work ran for minutes with
Ctrl-C ignored and progress reported a few times (items are large and skewed:
the heaviest go first). So every lane stops after a budget of steps, wherever
it is in its subtree, saves its DFS state, and the next call resumes it
(:mod:`~warpmatch.engine._cpu_kernels`). The budget adapts to aim at
``CALL_S`` seconds per call; between calls Python handles signals, reports
progress and asks ``stop`` whether to end early (``--limit``, ``--time-limit``).
Progress is in units of estimated work: an item weighs ``slice length x
sqrt(root degree)``, which tracked measured per-item times within ~20% of the
total on RMAT graphs for triangles, 4-cycles and 4-cliques (item count alone,
or roots, were off by 30-50%: the heavy hubs come first).

Work items (the load-balancing unit): a root whose depth-1 scan list is long
(a hub of a power-law graph) is split into items of at most ``split`` scan
positions each, so that its subtree is spread over all lanes. Items are sorted
by their root's estimated cost, heaviest first, and lane ``t`` of ``T`` takes
items ``t, t+T, ...`` (see the kernel module).

Examples
--------
>>> from warpmatch.graph.csr import Graph
>>> from warpmatch.plan import build_plan
>>> from warpmatch.query.model import Query
>>> g = Graph.from_edges([0, 1, 2, 2, 3], [1, 2, 0, 3, 0])
>>> plan = build_plan(g, Query.from_edges([(0, 1), (1, 2), (2, 0)]))
>>> CpuEngine().count(g, plan) * plan.multiplier     # two triangles, 6 maps each
12
"""
from __future__ import annotations

import math
import os
import time
import weakref
from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np

from ..graph.csr import Graph
from ..plan.plan import Plan
from ._watchdog import watchdog
from .base import Progress, Stop

if TYPE_CHECKING:
    from ..plan.leaves import LeafGroup

#: where the search prunes by failing sets (:func:`failing_sets_wanted`):
#: "labeled", "all" or "off" ($WARPMATCH_FAILING_SETS overrides)
FAILING_SETS = "labeled"
#: a leaf group (``plan.leaves``) is counted where the product of its leaves' set lengths
#: is at least this many times their sum plus the matched vertices, else enumerated
#: (``_cpu_leaves._leaf_worth``; 0: always count). Counting tiny sets (a labeled query's
#: refined leaves) cost 2.5-4x more than enumerating them; with 16, yeast's and
#: human's labeled queries lost nothing measurable against enumeration and kept the gains
LEAF_WORTH = 16.0
#: the same threshold's factor for independent vertices (``plan.leaves`` fifth case), whose
#: sets are intersections, much shorter than the lists the estimate multiplies, and whose
#: scans test each entry by binary searches where enumerating merges sorted lists
MULTI_WORTH = 2.0
#: and they are counted only where the first one's set holds at least this many entries
#: (``_cpu_leaves._leaf_mixed``; else enumerated: that costs about as many scans of the
#: later members' lists). On the 2-core box, against enumerating them: with 1 and 4,
#: yeast's ``query_dense_24_1`` took 1.7x as long; with 8 and no minimum as long, but
#: STMatch's pattern 13 (email-Eu-core) counted as much as enumerating in 10 s and human's
#: ``query_sparse_16_1`` as much; with 2 and 4, 1.05x, 1.6x and 3.7x as much
MULTI_MIN = 4
#: smallest number of depth-1 scan positions per work item: large enough that
#: the per-item set-up (a root check and one depth initialisation) is noise
MIN_SPLIT = 32
#: seconds one kernel call aims at: short enough that Ctrl-C, progress and the
#: stop checks come several times a second, long enough that a call's fixed cost
#: (starting the parallel region; the lanes end a call together, see the flag of
#: ``_cpu_kernels._run_lane``) stays small: counts took within ±2% of one call
#: over all the work (RMAT 2**16-2**18, triangles and 4-cliques, 1 and 2 threads)
CALL_S = 0.1
#: a call still running after this many times ``CALL_S`` is stopped (``_watchdog``): the
#: budget assumes the last call's steps per second, and one region of a search can be
#: 30x slower per step than another (human ``query_sparse_20_72``: 0.1 s, then 3.1 s on
#: the same budget)
DEADLINE_X = 2.0
#: step budget of the first call (well under a millisecond); later calls scale it
FIRST_BUDGET = 1 << 12
#: most a budget grows from one call to the next (a call that ended because the
#: lanes ran out of work says little about the speed)
MAX_GROWTH = 8


def _ro(a: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """A read-only C-contiguous view (a copy only if dtype or layout differ).

    Every kernel input is read-only so memory-mapped (read-only) and in-memory
    graphs share one compiled numba signature.
    """
    out = np.ascontiguousarray(a, dtype=dtype).view()
    out.flags.writeable = False
    return out


def _graph_arrays(graph: Graph) -> tuple[np.ndarray, ...]:
    """The graph's arrays in kernel argument order (empty arrays for absent labels).

    ``(indptr, indices, in_indptr, in_indices, edge_labels, in_edge_labels,
    vertex_labels)``: offsets int64, ids int32 (int64 for huge graphs), labels int32.
    """
    itype = np.dtype(np.int64) if graph.indices.dtype == np.int64 else np.dtype(np.int32)
    indptr = _ro(graph.indptr, np.int64)
    indices = _ro(graph.indices, itype)
    if graph.directed:
        in_indptr = _ro(graph.in_indptr, np.int64)
        in_indices = _ro(graph.in_indices, itype)
    else:
        in_indptr, in_indices = indptr, indices
    empty = _ro(np.zeros(0, np.int32), np.int32)
    elab = empty if graph.edge_labels is None else _ro(graph.edge_labels, np.int32)
    in_elab = elab
    if graph.edge_labels is not None and graph.directed:
        in_elab = _ro(graph.in_edge_labels, np.int32)
    vlab = empty if graph.vertex_labels is None else _ro(graph.vertex_labels, np.int32)
    return indptr, indices, in_indptr, in_indices, elab, in_elab, vlab


def _leaf_group_header(plan: Plan, graph: Graph, grp: LeafGroup | None | str = "find"
                       ) -> list[int]:
    """The program header's leaf group (layout in ``_cpu_kernels``): ``grp``, or by default
    the plan's (:func:`_cpu_leaf_group`; :func:`~warpmatch.plan.leaves.leaf_group` decides
    where it is exact)."""
    if isinstance(grp, str):
        grp = _cpu_leaf_group(plan, graph)
    if grp is None:
        return [plan.k, 0, 0, 0]
    return [grp.first, grp.parent, grp.direction, 2 if grp.mixed else int(grp.chain)]


def _cpu_leaf_group(plan: Plan, graph: Graph) -> LeafGroup | None:
    """The leaf group the CPU engine counts: :func:`~warpmatch.plan.leaves.leaf_group` with
    independent vertices (``multi``), unless ``$WARPMATCH_INDEPENDENT`` is ``0`` (to
    compare)."""
    from ..plan.leaves import MIXED_MAX, leaf_group
    multi = os.environ.get("WARPMATCH_INDEPENDENT", "1").strip() != "0"
    grp = leaf_group(plan, graph.vertex_labels is not None, graph.edge_labels is not None,
                     MIXED_MAX, multi)
    if grp is not None and grp.multi and bool(plan.cand_restricted[grp.first:].all()):
        # every member has a candidate set, which bounds its set: where even those sizes
        # never reach the threshold (``_cpu_leaves._leaf_worth``: the ratio of the product
        # to the weighted sum grows with each size) the group would be enumerated at every
        # partial match, and testing that each time cost 10-20% on yeast's 32-vertex
        # labeled queries: no group
        sizes = np.diff(plan.cand_ptr)[grp.first:].astype(float)
        j = sizes.size
        prod = float(np.prod(sizes))
        tot = float(np.dot(sizes, np.arange(j, 0, -1)))
        if prod * 1000.0 < _worth_milli(grp) * tot:
            return None
    return grp


def _worth_milli(grp: LeafGroup | None) -> int:
    """The program's counting threshold for the group (``S_LEAFX[0]``: 1000 times
    :data:`LEAF_WORTH`, times :data:`MULTI_WORTH` for independent vertices)."""
    multi = grp is not None and grp.multi
    return int(LEAF_WORTH * (MULTI_WORTH if multi else 1.0) * 1000)


def failing_sets_wanted(plan: Plan, graph: Graph) -> bool:
    """Whether the search prunes by failing sets (DP-iso) for this plan.

    :data:`FAILING_SETS` (``$WARPMATCH_FAILING_SETS``): ``"labeled"`` (the default) on a
    graph with vertex or edge labels, ``"all"``, or ``"off"``. Never for a rule-8 plan
    (partition cut: the cut check reads matched vertices no table here tracks) or more
    than :data:`~._cpu_kernels.FS_MAX_K` vertices (one bit per depth in an int64).
    """
    from . import _cpu_kernels as K
    how = os.environ.get("WARPMATCH_FAILING_SETS", FAILING_SETS)
    if how not in ("labeled", "all", "off"):
        raise ValueError(f"WARPMATCH_FAILING_SETS must be labeled, all or off, not {how!r}")
    if how == "off" or plan.cut_part is not None or not 3 <= plan.k <= K.FS_MAX_K:
        return False
    return how == "all" or graph.vertex_labels is not None or graph.edge_labels is not None


def _failing_set_tables(plan: Plan, graph: Graph, inj_ptr: np.ndarray, inj_pos: list[int],
                        grp0: int) -> tuple[np.ndarray, np.ndarray]:
    """The failing-set tables of the program (layout in ``_cpu_kernels``).

    ``anc[i]``: bit ``i`` and the bits of every depth that depth ``i``'s candidates
    depend on, transitively: its backward neighbours (the lists it intersects),
    restriction partners (the scan's bounds) and, when induced, non-neighbours (its
    non-edge checks). A depth's candidate list is a function of those depths' matches
    only, which is what makes ``anc`` sets (and unions of them) failing sets.
    ``failx``: the failing set of a leaf group (first depth ``grp0``) counted to zero, of
    a last depth counted to zero, and whether pruning is on.
    """
    k = plan.k
    if not failing_sets_wanted(plan, graph):
        return np.zeros(k, dtype=np.int64), np.zeros(3, dtype=np.int64)
    # plain ints: this runs once per search, and numpy scalars cost more than the work
    tables = [(ptr.tolist(), pos.tolist()) for ptr, pos in (
        (plan.bn_ptr, plan.bn_pos), (plan.res_ptr, plan.res_pos), (plan.na_ptr, plan.na_pos))]
    anc: list[int] = []
    for i in range(k):
        m = 1 << i
        for ptr, pos in tables:
            for j in pos[ptr[i]:ptr[i + 1]]:
                m |= anc[j]
        anc.append(m)
    iptr = inj_ptr.tolist()

    def with_rivals(i: int) -> int:
        # a count of depth i's candidates also depends on the matched vertices it must
        # differ from (injectivity)
        m = anc[i]
        for j in inj_pos[iptr[i]:iptr[i + 1]]:
            m |= anc[j]
        return m

    grp_fail = 0
    for i in range(min(grp0, k), k):
        grp_fail |= with_rivals(i)
    return (np.array(anc, dtype=np.int64),
            np.array([grp_fail, with_rivals(k - 1), 1], dtype=np.int64))


def _program(plan: Plan, graph: Graph) -> np.ndarray:
    """The plan packed into the kernels' int64 program array (layout in ``_cpu_kernels``).

    Besides the plan's own arrays it holds two derived tables:
    ``inj_ptr/inj_pos``, the earlier depths a candidate must still be compared
    with for injectivity (a backward neighbour is adjacent, hence distinct, as
    graphs have no self-loops; a restriction is strict), and ``fast_last``,
    set when the last depth's count is the size of an intersection of lists
    (no label, degree, candidate-set, induced or edge-label check left), and at the
    first depth of twins (:func:`~warpmatch.plan.leaves.twin_group`), whose set is one.
    """
    from ..plan.leaves import twin_group
    from . import _cpu_kernels as K
    k = plan.k
    bn_ptr = plan.bn_ptr.astype(np.int64)
    res_ptr = plan.res_ptr.astype(np.int64)
    inj_ptr = np.zeros(k + 1, dtype=np.int64)
    inj_pos: list[int] = []
    for i in range(k):
        skip = set(plan.bn_pos[bn_ptr[i]:bn_ptr[i + 1]].tolist())
        skip |= set(plan.res_pos[res_ptr[i]:res_ptr[i + 1]].tolist())
        inj_pos.extend(j for j in range(i) if j not in skip)
        inj_ptr[i + 1] = len(inj_pos)
    fast_last = np.zeros(k, dtype=np.int64)
    i = k - 1
    t0, t1 = int(bn_ptr[i]), int(bn_ptr[i + 1])
    # rule 8 checks every candidate, except a plain leaf's, whose cut neighbours'
    # lists (plan.cut_graph) say how many its edge's order excludes
    cut_leaf = (plan.cut_part is not None and plan.cut_graph is not None and k >= 3
                and t1 - t0 == 1)
    if k >= 2 and t1 > t0 and (plan.cut_part is None or cut_leaf):
        pos = plan.bn_pos[t0:t1]
        dirs = plan.bn_dir[t0:t1]
        # a vertex in the lists of d distinct matched vertices has degree >= d
        # (no self-loops, no duplicate edges): the LDF bound may be implied
        if graph.directed:
            implied_in = np.unique(pos[dirs == 0]).size     # edges M[j] -> c
            implied_out = np.unique(pos[dirs == 1]).size    # edges c -> M[j]
        else:
            implied_in = implied_out = np.unique(pos).size
        fast_last[i] = (
            not bool(plan.cand_restricted[i])
            and (plan.vlabel[i] == -1 or graph.vertex_labels is None)
            and (bool(np.all(plan.bn_elabel[t0:t1] == -1)) or graph.edge_labels is None)
            and plan.na_ptr[i + 1] == plan.na_ptr[i]
            and plan.min_out_deg[i] <= implied_out and plan.min_in_deg[i] <= implied_in)
    # twins (plan.leaves.twin_group): the fast path counts their set at the first one's
    # depth where nothing but their edges is to check, else the scan of that depth counts
    # its survivors, and the kernels turn that count into theirs (H_TWIN_CHAIN);
    # $WARPMATCH_TWINS=0 enumerates them (to compare)
    labs = (graph.vertex_labels is not None, graph.edge_labels is not None)
    twins = None
    if os.environ.get("WARPMATCH_TWINS", "1").strip() != "0":
        twins = twin_group(plan, *labs, checks=True)
        bare = twin_group(plan, *labs)
        if twins is not None and bare is not None and bare.first == twins.first:
            fast_last[twins.first] = 1
    segs = [None] * K.NSEG
    segs[K.S_VLABEL] = plan.vlabel
    segs[K.S_MIN_OUT] = plan.min_out_deg
    segs[K.S_MIN_IN] = plan.min_in_deg
    segs[K.S_BN_PTR] = plan.bn_ptr
    segs[K.S_BN_POS] = plan.bn_pos
    segs[K.S_BN_DIR] = plan.bn_dir
    segs[K.S_BN_ELABEL] = plan.bn_elabel
    segs[K.S_NA_PTR] = plan.na_ptr
    segs[K.S_NA_POS] = plan.na_pos
    segs[K.S_NA_DIR] = plan.na_dir
    segs[K.S_RES_PTR] = plan.res_ptr
    segs[K.S_RES_POS] = plan.res_pos
    segs[K.S_RES_SIGN] = plan.res_sign
    segs[K.S_CAND_PTR] = plan.cand_ptr
    segs[K.S_CAND_RESTRICTED] = plan.cand_restricted
    segs[K.S_FAST_LAST] = fast_last
    segs[K.S_INJ_PTR] = inj_ptr
    segs[K.S_INJ_POS] = np.asarray(inj_pos, dtype=np.int64)
    grp_obj = _cpu_leaf_group(plan, graph)
    if twins is not None and grp_obj is not None:
        # independent vertices may include unrestricted twins: one of the two is counted,
        # the longer (twins on a tie: one intersection, no inclusion-exclusion)
        if plan.k - grp_obj.first > plan.k - twins.first:
            twins = None
            fast_last[:k - 1] = 0
        else:
            grp_obj = None
    grp = _leaf_group_header(plan, graph, grp_obj)
    # a leaf group and twins are never both counted: the group's failing set is that of
    # whichever there is
    segs[K.S_ANC], segs[K.S_FAILX] = _failing_set_tables(
        plan, graph, inj_ptr, inj_pos, grp[0] if twins is None else twins.first)
    segs[K.S_LEAFX] = np.array([_worth_milli(grp_obj), MULTI_MIN], dtype=np.int64)
    lens = [np.asarray(a).size for a in segs]
    head = K.HEAD + K.NSEG + 1
    offsets = head + np.concatenate([[0], np.cumsum(lens)])
    if plan.cut_part is None:
        cut = K.CUT_OFF
    elif not graph.directed:
        cut = K.CUT_UND
    else:
        cut = K.CUT_BWD if plan.cut_prime else K.CUT_FWD
    header = [k, graph.edge_labels is not None, graph.vertex_labels is not None,
              int(plan.bn_pos.size), cut] + grp + [int(plan.cut_depth),
                                                    int(cut_leaf and bool(fast_last[i]))]
    header += [k, 0] if twins is None else [twins.first, int(twins.chain)]
    header += [int(grp_obj is not None and grp_obj.multi)]       # H_GRP_MULTI
    prog = np.concatenate([np.asarray(header, dtype=np.int64), offsets.astype(np.int64)]
                          + [np.asarray(a).astype(np.int64).ravel() for a in segs])
    return _ro(prog, np.int64)


def leaf_table_wanted(plan: Plan, prog: np.ndarray) -> bool:
    """Whether a count reads its last depth from a table (``ltab``, filled by the kernels
    with ``_cpu_leaves._leaf_count``); ``prog`` is the plan's program (:func:`_program`).

    Where the last depth is a leaf (one backward edge) with no restriction, no induced
    non-edge and no partition cut (:func:`warpmatch.plan.leaves.table_leaf`), every check
    left is on the candidate alone, so the usable entries of each parent's list can be
    counted once per search (when the search first reaches that parent) instead of once
    per partial match; the search then only takes out the matched vertices among them.
    The same table gives the set size of a counted group of alike leaves
    (``_cpu_leaves._leaf_group``, restricted to a chain or not), so it is also wanted
    where the last depths are such a group; a restricted last depth (a chain's) then does
    not read it when the search descends there (the table's last slot is 0). Not where
    the kernels' own fast path counts the last depth already (nothing to check: the list
    size). ``$WARPMATCH_LEAF_TABLE=0`` turns it off (to compare).
    """
    from ..plan.leaves import table_leaf
    from . import _cpu_kernels as K
    if os.environ.get("WARPMATCH_LEAF_TABLE", "1").strip() == "0":
        return False
    if int(prog[int(prog[K.HEAD + K.S_FAST_LAST]) + plan.k - 1]) != 0:
        return False
    alike_group = int(prog[K.H_GRP0]) < plan.k and int(prog[K.H_GRP_CHAIN]) != 2
    return table_leaf(plan) or alike_group


def _leaf_table(plan: Plan, graph: Graph, args: tuple) -> np.ndarray:
    """The last leaf's table for the kernels: one slot per data vertex (its count of usable
    entries plus one, 0 until the search first needs it) and a last slot, 1 where the last
    depth itself may read it (:func:`warpmatch.plan.leaves.table_leaf`; else only an alike
    leaf group does); or an empty array where :func:`leaf_table_wanted` says no.
    ``np.zeros`` maps its pages lazily: only the slots of vertices the search reaches cost
    memory."""
    from ..plan.leaves import table_leaf
    if not leaf_table_wanted(plan, args[8]):      # args[8]: the program (_prepare)
        return args[-1]
    out = np.zeros(graph.n + 1, dtype=np.int32)
    out[graph.n] = int(table_leaf(plan))
    return out


#: each cut graph's lists as the kernels read them (:func:`_cut_arrays`)
_CUT_ARRAYS: "weakref.WeakKeyDictionary[Graph, tuple]" = weakref.WeakKeyDictionary()


def _cut_arrays(cut: Graph | None, graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """``(cptr, cidx)``: rule 8's cut neighbours (``Plan.cut_graph``) for the kernels, its
    out-lists' offsets then (directed) its in-lists' into one id array of ``graph``'s
    dtype (one compiled signature per index dtype); empty without a cut graph. Made once
    per cut graph."""
    itype = graph.indices.dtype
    if cut is None:
        return _ro(np.zeros(0, np.int64), np.int64), _ro(np.zeros(0, itype), itype)
    if cut.n != graph.n:
        raise ValueError(f"plan.cut_graph has {cut.n} vertices, the graph {graph.name!r} "
                         f"has {graph.n}")
    got = _CUT_ARRAYS.get(cut)
    if got is None or got[1].dtype != itype:
        if graph.directed:
            ptr = np.concatenate([cut.indptr, cut.in_indptr + cut.indices.size])
            idx = np.concatenate([cut.indices, cut.in_indices]).astype(itype, copy=False)
        else:
            ptr, idx = cut.indptr, cut.indices.astype(itype, copy=False)
        got = _CUT_ARRAYS[cut] = (_ro(ptr, np.int64), _ro(idx, itype))
    return got


def _work_items(graph: Graph, plan: Plan, lanes: int) -> tuple[np.ndarray, ...]:
    """Split the roots into work items, heaviest first.

    Returns ``(item_root, item_a, item_b, weight)``: item ``w`` scans offsets
    ``[item_a[w], item_b[w])`` of root ``item_root[w]``'s depth-1 generator
    list (the kernel picks the same shortest list estimated here, and the
    slices of one root partition ``[0, inf)``, so any list is covered exactly
    once); ``weight[w] >= 1`` is its estimated cost (module docstring), the
    unit of progress.
    """
    roots = plan.roots
    nr = int(roots.size)
    big = np.int64(1) << np.int64(62)
    if plan.k == 1 or nr == 0:
        z = np.zeros(nr, dtype=np.int64)
        return (np.arange(nr, dtype=np.int64), z, np.full(nr, big, np.int64),
                np.ones(nr, dtype=np.int64))
    r = roots.astype(np.int64)
    length = np.full(nr, np.iinfo(np.int64).max, dtype=np.int64)
    for t in range(int(plan.bn_ptr[1]), int(plan.bn_ptr[2])):
        ptr = graph.indptr if int(plan.bn_dir[t]) == 0 else graph.in_indptr
        length = np.minimum(length, ptr[r + 1] - ptr[r])
    if plan.cand_restricted[1]:
        length = np.minimum(length, int(plan.cand_ptr[2] - plan.cand_ptr[1]))
    # split so that there are a few thousand items per lane at most
    split = max(MIN_SPLIT, math.ceil(int(length.sum()) / (lanes * 4096)))
    nsplit = np.maximum(1, -(-length // split))
    order = np.argsort(-length, kind="stable")
    reps = nsplit[order]
    item_root = np.repeat(order.astype(np.int64), reps)
    starts = np.cumsum(reps) - reps
    within = np.arange(item_root.size, dtype=np.int64) - np.repeat(starts, reps)
    item_a = within * split
    item_b = item_a + split
    root_last = np.zeros(item_root.size, dtype=bool)
    root_last[np.cumsum(reps) - 1] = True
    item_b[root_last] = big
    ln = length[item_root]
    weight = np.minimum(item_b, ln) - item_a
    weight = np.maximum(1, weight * np.sqrt(ln)).astype(np.int64)
    return item_root, item_a, item_b, weight


class _Lanes:
    """The lanes' DFS states between kernel calls, the adaptive budget, and progress.

    Lane ``t`` of ``T`` owns items ``t, t+T, ...`` (the kernel's static
    assignment); its state row says which item it is in or takes next, so the
    work done is the weight of the items below that, per lane.

    Parameters
    ----------
    weight : numpy.ndarray
        int64 estimated cost per item (:func:`_work_items`).
    lanes : int
    width : int
        The state row's length (:func:`~._cpu_kernels.state_width`).
    """

    def __init__(self, weight: np.ndarray, lanes: int, width: int) -> None:
        self.nitems = int(weight.size)
        self.lanes = lanes
        self.st = np.zeros((lanes, width), dtype=np.int64)
        self.st[:, 0] = -1                    # between items
        self.st[:, 1] = np.arange(lanes)      # each lane's first item
        rows = -(-self.nitems // lanes)
        per_lane = np.zeros(rows * lanes, dtype=np.int64)
        per_lane[:self.nitems] = weight
        # cum[m, t]: weight of lane t's first m items
        self.cum = np.zeros((rows + 1, lanes), dtype=np.int64)
        np.cumsum(per_lane.reshape(rows, lanes), axis=0, out=self.cum[1:])
        self.total = int(weight.sum())
        self.budget = FIRST_BUDGET
        self.flag = np.zeros(1, dtype=np.int64)   # set by the first lane out of budget

    @property
    def finished(self) -> bool:
        """Every lane is between items with none left."""
        st = self.st
        return bool(np.all((st[:, 0] < 0) & (st[:, 1] >= self.nitems)))

    def done(self) -> int:
        """Weight of the items finished so far."""
        st = self.st
        # inside an item, the lane took it already: its next item is st[1]
        current = np.where(st[:, 0] >= 0, st[:, 1] - self.lanes, st[:, 1])
        current = np.minimum(current, self.nitems)
        t = np.arange(self.lanes)
        mine = np.maximum(0, (current - t + self.lanes - 1) // self.lanes)
        return int(self.cum[mine, t].sum())

    def call(self, kernel: Callable[[int], None]) -> None:
        """Run ``kernel(budget)`` once, stopped at ``DEADLINE_X * CALL_S`` if it runs on,
        then size the next budget to take ``CALL_S``."""
        t0 = time.perf_counter()
        self.flag[0] = 0
        dog = watchdog()
        token = dog.arm(self.flag, DEADLINE_X * CALL_S)
        try:
            kernel(self.budget)
        finally:
            dog.disarm(token)
        dt = time.perf_counter() - t0
        grow = MAX_GROWTH if dt <= 0 else min(MAX_GROWTH, CALL_S / dt)
        # capped: calls that end early (lanes out of work or output) grow it every time
        self.budget = min(1 << 48, max(FIRST_BUDGET, int(self.budget * grow)))


def numba_available() -> tuple[bool, str]:
    """``(True, "")`` if numba imports, else ``(False, reason)``: whether the CPU engines
    (static and delta) can run."""
    try:
        import numba  # noqa: F401
    except ImportError as exc:           # pragma: no cover - numba is a dependency
        return False, f"numba is not importable: {exc}"
    return True, ""


class CpuEngine:
    """Parallel numba engine (``name = "cpu"``); see the module docstring.

    Parameters
    ----------
    threads : int, optional
        Number of lanes (parallel workers). The default is ``None``, meaning
        numba's current thread count (``numba.get_num_threads()``).
    """

    name = "cpu"

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads
        #: the last count's or listing's ``failing_set_prunes``: depth scans ended
        #: because a failing set showed the rest could not match (DP-iso; 0 when off)
        self.last_stats: dict[str, int] = {}

    def available(self) -> tuple[bool, str]:
        """(True, "") if numba imports, else (False, reason)."""
        return numba_available()

    def _lanes(self) -> int:
        import numba
        return max(1, int(self.threads or numba.get_num_threads()))

    def _prepare(self, graph: Graph, plan: Plan) -> tuple[tuple, np.ndarray]:
        """Kernel arguments: graph arrays + candidate ids + program, and the roots."""
        garr = _graph_arrays(graph)
        cids = _ro(plan.cand_ids, garr[1].dtype)
        roots = cids[int(plan.cand_ptr[0]):int(plan.cand_ptr[1])]
        if plan.cut_part is None:
            part = _ro(np.zeros(0, np.int32), np.int32)
        else:
            if plan.cut_part.shape != (graph.n,):
                raise ValueError(f"plan.cut_part has shape {plan.cut_part.shape}, the graph "
                                 f"{graph.name!r} has {graph.n} vertices")
            part = _ro(plan.cut_part, np.int32)
        cptr, cidx = _cut_arrays(plan.cut_graph, graph)
        ltab = np.zeros(0, np.int32)      # count() gives the last leaf's table where it pays
        return garr + (cids, _program(plan, graph), part, cptr, cidx, ltab), roots

    def count(self, graph: Graph, plan: Plan, progress: Progress | None = None,
              stop: Stop | None = None) -> int:
        """Raw number of matches of ``plan`` in ``graph`` (not multiplied by the multiplier).

        Parameters
        ----------
        graph : Graph
        plan : Plan
        progress : callable, optional
            Called as ``progress(work_done, work_total)`` between kernel calls,
            several times a second (units of estimated work, see the module
            docstring). The default is ``None``.
        stop : callable, optional
            Called as ``stop(raw_count_so_far)`` between kernel calls; when it
            returns True the search ends and the count so far (a lower bound)
            is returned. The default is ``None``: count everything.

        Returns
        -------
        int
        """
        steps = self.count_steps(graph, plan)
        calls = work = 0
        while True:
            try:
                total, done, work = next(steps)
            except StopIteration as end:
                if progress is not None:
                    progress(work, work)
                return int(end.value)
            if progress is not None:
                progress(done, work)
            # asked after each call, not before the first
            if stop is not None and calls and stop(total):
                steps.close()
                return total
            calls += 1

    def count_steps(self, graph: Graph, plan: Plan) -> Iterator[tuple[int, int, int]]:
        """:meth:`count` one kernel call at a time, for a caller that interleaves
        searches (:mod:`warpmatch.engine.race`).

        Yields ``(raw_count_so_far, work_done, work_total)`` before the first call and
        after every call that leaves work (units of :meth:`count`'s progress); returns
        the raw count (``StopIteration.value``) once the search is complete. Closing it
        early leaves :attr:`last_stats` describing the part searched.

        Parameters
        ----------
        graph : Graph
        plan : Plan

        Returns
        -------
        Iterator[tuple[int, int, int]]
        """
        from ._cpu_kernels import ST_PRUNES, run_lanes, state_width
        self.last_stats = {"failing_set_prunes": 0}
        nroots = int(plan.roots.size)
        if plan.empty_reason is not None or nroots == 0:
            yield 0, nroots, nroots
            return 0
        lanes = self._lanes()
        args, roots = self._prepare(graph, plan)
        args = args[:-1] + (_leaf_table(plan, graph, args),)
        item_root, item_a, item_b, weight = _work_items(graph, plan, lanes)
        nitems = int(item_root.size)
        run = _Lanes(weight, lanes, state_width(plan.k, int(plan.bn_pos.size)))
        out = np.zeros((lanes, 1, plan.k), dtype=np.int64)   # unused when counting
        res = np.zeros(lanes, dtype=np.int64)
        total = 0

        def kernel(budget: int) -> None:
            run_lanes(item_root, item_a, item_b, nitems, roots, *args, run.st, out, res, 0,
                      True, budget, run.flag)

        # an empty first call: compiling (or loading the cached kernel) happens
        # here, so it never counts as the first call's search time
        run_lanes(item_root, item_a, item_b, 0, roots, *args, run.st, out, res, 0, True, 0,
                  run.flag)
        try:
            yield 0, 0, run.total
            while not run.finished:
                run.call(kernel)
                total += int(res.sum())
                if not run.finished:
                    yield total, run.done(), run.total
        finally:
            self.last_stats = {"failing_set_prunes": int(run.st[:, ST_PRUNES].sum())}
        return total

    def match(self, graph: Graph, plan: Plan, batch_size: int = 1 << 16,
              limit: int | None = None, progress: Progress | None = None,
              yield_empty: bool = False) -> Iterator[np.ndarray]:
        """Yield raw matches as int64 arrays (rows × k), depth order, internal ids.

        Each lane keeps its DFS state between kernel calls and writes at most
        ``batch_size // lanes`` rows per call, so memory is bounded by the
        batch size however many matches one root has. A call also ends after
        a step budget (module docstring), so Python runs (signals, progress)
        several times a second even while no match is found.

        Parameters
        ----------
        graph : Graph
        plan : Plan
        batch_size : int, optional
            Most rows per yielded array. The default is 65536.
        limit : int, optional
            Stop after this many rows. The default is ``None``: all matches.
        progress : callable, optional
            Called as ``progress(work_done, work_total)`` after each call.
        yield_empty : bool, optional
            Also yield an empty array after a call that found no match, so that a
            caller interleaving searches gets control back while none is found
            (:func:`warpmatch.engine.race.match_race`). The default is ``False``.

        Yields
        ------
        numpy.ndarray
            int64 array of shape (rows, k), 1 <= rows <= ``batch_size`` (0 rows too with
            ``yield_empty``).
        """
        from ._cpu_kernels import ST_PRUNES, run_lanes, state_width
        self.last_stats = {"failing_set_prunes": 0}
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        nroots = int(plan.roots.size)
        remaining = -1 if limit is None else int(limit)
        if plan.empty_reason is not None or nroots == 0 or remaining == 0:
            if progress is not None:
                progress(nroots, nroots)
            return
        k = plan.k
        args, roots = self._prepare(graph, plan)
        item_root, item_a, item_b, weight = _work_items(graph, plan, self._lanes())
        nitems = int(item_root.size)
        lanes = max(1, min(self._lanes(), nitems))
        run = _Lanes(weight, lanes, state_width(k, int(plan.bn_pos.size)))
        cap = max(1, batch_size // lanes)
        out = np.empty((lanes, cap, k), dtype=np.int64)
        res = np.zeros(lanes, dtype=np.int64)
        cap_now = cap

        def kernel(budget: int) -> None:
            run_lanes(item_root, item_a, item_b, nitems, roots, *args, run.st, out, res,
                      cap_now, False, budget, run.flag)

        run_lanes(item_root, item_a, item_b, 0, roots, *args, run.st, out, res, 1, False, 0,
                  run.flag)
        if progress is not None:
            progress(0, run.total)
        while True:
            cap_now = cap if remaining < 0 else min(cap, remaining)
            run.call(kernel)
            self.last_stats = {"failing_set_prunes": int(run.st[:, ST_PRUNES].sum())}
            rows = np.concatenate([out[t, :res[t]] for t in range(lanes)])
            finished = run.finished
            if progress is not None:
                progress(run.done(), run.total)
            if remaining >= 0 and rows.shape[0] > remaining:
                rows = rows[:remaining]
            for s in range(0, rows.shape[0], batch_size):
                yield rows[s:s + batch_size]
            if yield_empty and rows.shape[0] == 0 and not finished:
                yield rows
            if remaining >= 0:
                remaining -= rows.shape[0]
                if remaining == 0:
                    return
            if finished:
                return
