"""Where count mode may count query vertices from a list size instead of enumerating them.

Map: :class:`LeafGroup` < :func:`leaf_group` (the plan's last depths that are plain
leaves of one matched vertex, if any, and whether their restrictions order them
(:func:`_chain`); else :func:`_mixed_group`, the last two to :data:`MIXED_MAX` plain
leaves of any matched vertices, or independent vertices (:func:`_member`)) <
:func:`bare_group` (the GPU engine's) < :func:`twin_group` (last depths with the same two
or more backward neighbours) < :func:`alike_group`, :func:`table_leaf` <
:func:`indep_group` (the GPU engine's independent vertices).

Issue 21's "counting without enumerating", first case: when the last ``j >= 2``
depths are leaves hanging off one earlier depth ``p`` by the same kind of edge,
nothing ties them together but injectivity, so their matches number
``s (s-1) ... (s-j+1)`` for the ``s`` entries of ``M[p]``'s list they may take
(not matched already, with their label, edge label and candidate set), or
``C(s, j)`` when the symmetry-breaking restrictions order them in a chain (a
k-star's leaves). The CPU engine counts them so
(``engine._cpu_leaves._leaf_group``); ``explain`` says where.
A single last leaf is the engines' older fast path (the list size, or an
intersection size), not a group.

Second case, leaves of different parents (``mixed``): the last ``j`` = 2 to
:data:`MIXED_MAX` depths are plain leaves, each of its own matched vertex and with its own
label, edge label and direction, and no restriction touches them. With ``S_i`` the set
a leaf may take (its parent's list, filtered, less the matched vertices), the
injective choices number, by inclusion-exclusion over the overlaps (Möbius
inversion on the partitions of the leaves), ``|S1||S2| - |S1∩S2|`` for two,
``|S1||S2||S3| - |S1∩S2||S3| - |S1∩S3||S2| - |S2∩S3||S1| + 2|S1∩S2∩S3|`` for
three, and in general the sum over the set partitions of the leaves of the products
over their blocks ``B`` of ``(-1)^(|B|-1) (|B|-1)! |∩_{i in B} S_i|``
(``engine._cpu_leaves._leaf_mixed``). The GPU engine counts three at most
(``GpuEngine(leaf_groups="all")``).

Leaves may have candidate sets (anchors, or the sets refinement gives a labeled
query's vertices): the kernels test each list entry against its leaf's set, and alike
leaves must share one set.

Third case, one last leaf (:func:`table_leaf`): where the last depth has one backward edge,
no restriction and no induced non-edge, but a label, edge label, degree bound or candidate
set to check, how many entries of each data vertex's list pass those checks does not depend
on the partial match: the CPU engine counts them once per search and parent, the first
time the search reaches that parent, into a table (``engine._cpu_leaves._leaf_count``),
and subtracts the matched vertices among them. The same table gives an alike group's set
size (first case) where the engine counts the group.

The GPU engine counts the first case where every leaf is bare (no vertex label, edge label
or candidate set: :func:`bare_group`), so that the set is a whole list; with
``GpuEngine(leaf_groups="all")`` also the second, the overlaps being intersections of two
or three lists (one lane's serial work per partial match: slower than enumerating on an
H100, ``engine.gpu.render.LEAF_GROUPS``).

Fourth case, twins (:func:`twin_group`): the last ``j >= 2`` depths have the same two or
more backward neighbours (same directions) and nothing else to check: the common
neighbours of a matched edge in a diamond, of a matched triangle in K5 less an edge. Their
set ``S`` is one intersection of lists, the same for all of them, so their matches number
``C(s, j)`` (restrictions in a chain) or ``s (s-1) ... (s-j+1)`` for the ``s`` entries of
``S`` not matched already, where enumerating them would intersect the lists again for
every choice of the first. The CPU engine counts them at the first twin's depth with its
last-depth fast path (the intersection's size less the matched vertices in it); twins
with a label, edge labels or a candidate set, the same for all of them
(``twin_group(checks=True)``), from the scan of the first twin's candidates, which tests
each once and counts the survivors instead of descending. The GPU engine counts both
kinds by default (``GpuEngine(leaf_groups="twins")``, in the plan's own module and the
generic one), the whole warp intersecting the lists for one partial match after another
and, for twins with checks, testing each entry with the first twin's check
(``engine.gpu.render_leaves.render_twins``).

The GPU engine keeps the third case's table too, for a labeled last leaf and for labeled
alike leaves (``engine.gpu.render.table_leaves``: filled once per search by a warp a
candidate parent).

Fifth case, independent vertices (``leaf_group(multi=True)``, the CPU engine's): the
second case with members that are not plain leaves: the last ``j`` = 2 to
:data:`MIXED_MAX` depths have no edge among them (every backward edge goes to a depth
before the first of them), no restriction and no induced non-edge (:func:`_member`), and
each may have several backward edges, edge labels and degree bounds. Each one's set
``S_i`` is then the intersection of its matched neighbours' lists (filtered, less the
matched vertices), a function of the partial match only, and the same inclusion-exclusion
counts their injective choices; the engine scans each member's shortest list and tests its
other lists (``engine._cpu_leaves._in_multi``), and enumerates them where the first one's
set turns out small (``engine.cpu.MULTI_MIN``). A labeled plan's last two or three
vertices are often so (the third vertex of a triangle is independent of leaves on the
other two); counting them costs one pass over each set where enumerating intersects the
later members' lists again for every choice of the earlier ones. The GPU engine counts two
or three of them (:func:`indep_group`; by default, ``GpuEngine(leaf_groups="twins")``),
the whole warp scanning each member's
shortest list and testing the later members on its survivors
(``engine.gpu.render_leaves.render_indep``).

Not yet: trees hanging off the matched part (a leaf of a leaf), mixed leaves under
restrictions; labeled mixed leaves on the GPU (where no member has two backward edges).
"""
from __future__ import annotations

from dataclasses import dataclass

from .plan import Plan


@dataclass(frozen=True)
class LeafGroup:
    """Depths ``first..k-1`` are leaves of depth ``parent`` (see the module docstring)."""

    first: int
    parent: int         # (mixed: the first leaf's; each leaf's own is in the plan)
    direction: int      # 0: data edge M[parent] -> leaf; 1: leaf -> M[parent]
    chain: bool         # restrictions order all the leaves: C(s, j), else P(s, j)
    mixed: bool = False  # leaves of different parents: inclusion-exclusion
    multi: bool = False  # (mixed) some member has several backward edges or a degree bound


def _reach(after: dict[int, set[int]], d: int) -> set[int]:
    """Depths ordered after ``d`` by the restriction pairs (transitively)."""
    seen: set[int] = set()
    todo = list(after[d])
    while todo:
        x = todo.pop()
        if x not in seen:
            seen.add(x)
            todo.extend(after[x])
    return seen


#: most leaves of different vertices counted together (the CPU engine's state row holds
#: their parameters and the ``2^j`` overlaps of their sets)
MIXED_MAX = 7


def leaf_group(plan: Plan, vertex_labels: bool, edge_labels: bool,
               mixed_max: int = MIXED_MAX, multi: bool = False) -> LeafGroup | None:
    """The plan's leaf group, or ``None`` where counting it by list size is not exact.

    Exact only where nothing but injectivity ties the leaves: each has one
    backward edge, to the same depth and in the same direction, the same vertex
    and edge label and candidate set (or none), no induced non-edge or degree
    bound beyond its edge; their restrictions, if any, order all of them in one chain and
    involve no other depth. Off for inter-partition plans (rule 8 checks every
    candidate) and in listing (the engine only uses it when counting).

    Parameters
    ----------
    plan : Plan
    vertex_labels, edge_labels : bool
        Whether the data graph has vertex and edge labels (a label the graph
        cannot have constrains nothing it can check).
    mixed_max : int, optional
        Most leaves of different vertices in a group (:data:`MIXED_MAX`; the GPU
        engine's kernels count three at most).
    multi : bool, optional
        Let the members of a group of different vertices be independent vertices
        (:func:`_member`: several backward edges, degree bounds), not only plain
        leaves: the CPU engine's (fifth case of the module docstring).
    """
    k = plan.k
    if k < 3 or plan.cut_part is not None:
        return None
    same = _same_parent_group(plan, vertex_labels, edge_labels)
    mixed = _mixed_group(plan, vertex_labels, edge_labels, mixed_max, multi)
    if mixed is not None and (same is None or k - mixed.first > k - same.first):
        return mixed
    return same


def _plain_leaf(plan: Plan, d: int) -> bool:
    """Depth ``d`` has one backward edge and nothing else to check but its labels and
    candidate set (the kernels test both per entry): no induced non-edge, no degree bound
    beyond that edge's."""
    b0, b1 = int(plan.bn_ptr[d]), int(plan.bn_ptr[d + 1])
    if b1 - b0 != 1 or plan.na_ptr[d + 1] != plan.na_ptr[d]:
        return False
    if plan.directed:
        need_out, need_in = (0, 1) if int(plan.bn_dir[b0]) == 0 else (1, 0)
    else:
        need_out = need_in = 1
    return not (plan.min_out_deg[d] > need_out or plan.min_in_deg[d] > need_in)


def bare_last_leaf(plan: Plan, vertex_labels: bool, edge_labels: bool) -> bool:
    """Whether the last depth is a plain leaf with nothing to check but its one edge (no
    vertex or edge label the graph carries, no candidate set): its matches are then the
    entries of a list (restriction-clipped) less the matched vertices in it, which the
    engines count from the list instead of checking each candidate (and under rule 8,
    from the cut neighbours' lists, ``Plan.cut_graph``)."""
    d = plan.k - 1
    if d < 1 or not _plain_leaf(plan, d) or plan.cand_restricted[d]:
        return False
    b0 = int(plan.bn_ptr[d])
    return ((not vertex_labels or int(plan.vlabel[d]) == -1)
            and (not edge_labels or int(plan.bn_elabel[b0]) == -1))


def bare_group(plan: Plan, mixed: bool = True) -> LeafGroup | None:
    """The plan's leaf group (:func:`leaf_group`) where each of its leaves is bare: no
    vertex label, edge label or candidate set to test, only its one edge (its degree
    bound no more than that edge implies). The GPU engine counts such a group from list
    sizes and list intersections; ``None`` otherwise. ``mixed=False``: only alike leaves
    of one vertex (the last ones, where a longer group of different vertices ends with
    them)."""
    if mixed:
        grp = leaf_group(plan, True, True, mixed_max=3)
    elif plan.k < 3 or plan.cut_part is not None:
        grp = None                          # where leaf_group finds none either
    else:
        grp = _same_parent_group(plan, True, True)
    if grp is None:
        return None
    for d in range(grp.first, plan.k):
        b0 = int(plan.bn_ptr[d])
        if (int(plan.vlabel[d]) != -1 or int(plan.bn_elabel[b0]) != -1
                or bool(plan.cand_restricted[d])):
            return None
    return grp


def indep_group(plan: Plan, table: bool = True) -> LeafGroup | None:
    """The independent vertices the GPU engine counts (by default; fifth case
    of the module docstring; ``engine.gpu.render.indep_leaves``), else ``None``: the last two or three
    depths of :func:`leaf_group` with ``multi``, at least one not a plain leaf (leaves of
    different vertices alone are enumerated: counting them scans the lists the
    enumeration scans, one partial match at a time), two only where the enumeration would
    scan the last one's list for every match of the first (not a bare last leaf,
    :func:`bare_last_leaf`, nor, with ``table``, one counted from the leaf table,
    :func:`table_leaf`), and more depths than the plan's twins (on a tie, twins: one
    intersection for all of them)."""
    grp = leaf_group(plan, True, True, mixed_max=3, multi=True)
    if grp is None or not grp.mixed or not grp.multi or plan.empty_reason is not None:
        return None
    if plan.k - grp.first == 2 and (bare_last_leaf(plan, True, True)
                                    or (table and table_leaf(plan))):
        return None
    tw = twin_group(plan, True, True, checks=True)
    return None if tw is not None and tw.first <= grp.first else grp


def _member(plan: Plan, d: int, first: int) -> bool:
    """Depth ``d`` may be a member of a group of independent vertices that starts at
    ``first`` (fifth case of the module docstring): every backward edge goes to a depth
    before ``first`` (the members are pairwise non-adjacent, so each one's set depends on
    the matched vertices only), no induced non-edge (a non-edge between two members
    would tie them), no restriction (one sits at the later of its two depths: none at a
    member's depth means none involves it)."""
    b0, b1 = int(plan.bn_ptr[d]), int(plan.bn_ptr[d + 1])
    return (b1 > b0 and all(int(x) < first for x in plan.bn_pos[b0:b1])
            and plan.na_ptr[d + 1] == plan.na_ptr[d]
            and int(plan.res_ptr[d + 1]) == int(plan.res_ptr[d]))


def _mixed_group(plan: Plan, vertex_labels: bool, edge_labels: bool,
                 most: int = MIXED_MAX, multi: bool = False) -> LeafGroup | None:
    """The last ``j`` depths (the most, from ``most`` down to 2) as leaves of matched
    vertices with no restriction on them, counted by inclusion-exclusion; with ``multi``,
    as independent vertices (:func:`_member`); ``None`` where no two are so."""
    k = plan.k
    for j in range(min(most, k - 2), 1, -1):
        first = k - j
        if first < 2:
            continue
        group = range(first, k)
        if not all(_member(plan, d, first) for d in group):
            continue                        # e.g. a leaf of a leaf: a tree, not leaves
        plain = all(_plain_leaf(plan, d) for d in group)
        if not plain and not multi:
            continue
        b0 = int(plan.bn_ptr[first])
        return LeafGroup(first, int(plan.bn_pos[b0]), int(plan.bn_dir[b0]), False, mixed=True,
                         multi=not plain)
    return None


def _candidates(plan: Plan, d: int) -> bytes | None:
    """Depth ``d``'s candidate set (its ids' bytes), or ``None`` when it has none: alike
    leaves must have the same set (refinement gives each query vertex its own)."""
    if not plan.cand_restricted[d]:
        return None
    return plan.cand_ids[int(plan.cand_ptr[d]):int(plan.cand_ptr[d + 1])].tobytes()


def _same_parent_group(plan: Plan, vertex_labels: bool, edge_labels: bool
                       ) -> LeafGroup | None:
    """The first case of the module docstring, or ``None``."""
    k = plan.k
    key = None
    first = k
    for d in range(k - 1, 0, -1):
        if not _plain_leaf(plan, d):
            break
        b0 = int(plan.bn_ptr[d])
        mine = (int(plan.bn_pos[b0]), int(plan.bn_dir[b0]),
                int(plan.vlabel[d]) if vertex_labels else -1,
                int(plan.bn_elabel[b0]) if edge_labels else -1,
                _candidates(plan, d))
        if key is not None and mine != key:
            break
        key, first = mine, d
    j = k - first
    if key is None or j < 2:
        return None
    chain = _chain(plan, set(range(first, k)))
    if chain is None:
        return None                         # a partial order, or against a non-leaf
    return LeafGroup(first, key[0], key[1], chain)


def _chain(plan: Plan, group: set[int]) -> bool | None:
    """How the restrictions on the depths of ``group`` order them: ``True`` in one chain
    (``C(s, j)``), ``False`` not at all, ``None`` otherwise (a partial order, or a
    restriction against a depth outside the group)."""
    pairs = set()
    for d in group:
        for t in range(int(plan.res_ptr[d]), int(plan.res_ptr[d + 1])):
            other = int(plan.res_pos[t])
            if other not in group:
                return None
            pairs.add((other, d) if int(plan.res_sign[t]) == 1 else (d, other))
    if not pairs:
        return False
    after = {d: {b for a, b in pairs if a == d} for d in group}
    order = sorted(group, key=lambda d: -len(_reach(after, d)))
    if any(_reach(after, order[i]) != set(order[i + 1:]) for i in range(len(order))):
        return None
    return True


def _twin_key(plan: Plan, d: int, vertex_labels: bool, edge_labels: bool,
              checks: bool = False) -> tuple | None:
    """Depth ``d``'s backward neighbours as a sorted tuple of ``(pos, dir)`` where it may
    be a twin: at least two distinct ones, no induced non-edge, and nothing else to check
    (no vertex label or edge label the graph carries, no candidate set, no degree bound
    beyond what its edges imply); else ``None``. With ``checks``, labels, edge labels
    (``(pos, dir, label)``), a candidate set and degree bounds are allowed, and are part
    of the key (twins must share them)."""
    b0, b1 = int(plan.bn_ptr[d]), int(plan.bn_ptr[d + 1])
    pos = [int(x) for x in plan.bn_pos[b0:b1]]
    dirs = [int(x) for x in plan.bn_dir[b0:b1]]
    if len(set(pos)) < 2 or plan.na_ptr[d + 1] != plan.na_ptr[d]:
        return None
    if checks:
        elab = [int(x) if edge_labels else -1 for x in plan.bn_elabel[b0:b1]]
        return (tuple(sorted(zip(pos, dirs, elab))),
                int(plan.vlabel[d]) if vertex_labels else -1, _candidates(plan, d),
                int(plan.min_out_deg[d]), int(plan.min_in_deg[d]))
    if bool(plan.cand_restricted[d]) or (vertex_labels and int(plan.vlabel[d]) != -1):
        return None
    if edge_labels and any(int(x) != -1 for x in plan.bn_elabel[b0:b1]):
        return None
    if plan.directed:
        # c in N_out(M[p]) is an in-edge of c (dir 0), c -> M[p] an out-edge (dir 1)
        implied_in = len({p for p, r in zip(pos, dirs) if r == 0})
        implied_out = len({p for p, r in zip(pos, dirs) if r == 1})
    else:
        implied_in = implied_out = len(set(pos))
    if plan.min_out_deg[d] > implied_out or plan.min_in_deg[d] > implied_in:
        return None
    return tuple(sorted(zip(pos, dirs)))


def twin_group(plan: Plan, vertex_labels: bool, edge_labels: bool,
               checks: bool = False) -> LeafGroup | None:
    """The plan's twins (fourth case of the module docstring): the longest run of at least
    two last depths with the same backward neighbours (:func:`_twin_key`), all matched
    before the first of them, whose restrictions, if any, order all of them in one chain
    and involve no other depth; ``None`` where there is none. Off for inter-partition
    plans (rule 8 checks every candidate). ``parent`` and ``direction`` are the first
    backward edge's (the engine reads the rest from the plan). ``checks``: twins may have
    labels, edge labels, a candidate set and degree bounds (the same for all of them),
    which the CPU engine's scan of the first twin's candidates tests."""
    k = plan.k
    if k < 3 or plan.cut_part is not None:
        return None
    key = _twin_key(plan, k - 1, vertex_labels, edge_labels, checks)
    if key is None:
        return None
    top = int(plan.bn_pos[int(plan.bn_ptr[k - 1]):int(plan.bn_ptr[k])].max())
    first = k - 1
    while (first - 1 > top
           and _twin_key(plan, first - 1, vertex_labels, edge_labels, checks) == key):
        first -= 1
    # the longest run first; where its restrictions do not chain, a shorter one may
    for f in range(first, k - 1):
        chain = _chain(plan, set(range(f, k)))
        if chain is not None:
            b0 = int(plan.bn_ptr[f])
            return LeafGroup(f, int(plan.bn_pos[b0]), int(plan.bn_dir[b0]), chain)
    return None


def alike_group(plan: Plan) -> LeafGroup | None:
    """The plan's last alike leaves of one vertex (first case of the module docstring),
    labels, edge labels and candidate sets allowed (the same for all of them), at least
    two; ``None`` where there are none or for inter-partition plans."""
    if plan.k < 3 or plan.cut_part is not None:
        return None
    return _same_parent_group(plan, True, True)


def table_leaf(plan: Plan) -> bool:
    """Whether the last depth is a leaf the CPU engine counts from a table (third case of
    the module docstring), as far as the plan says: at least three depths (with two, a
    root's work is split into slices of the very list the table counts), one backward
    edge, no restriction, no induced non-edge, no partition cut. The engine also leaves it
    where its own fast path counts the list size (nothing to check) and where
    ``$WARPMATCH_LEAF_TABLE`` is ``0`` (``engine.cpu.leaf_table_wanted``)."""
    k, d = plan.k, plan.k - 1
    return (k >= 3 and plan.cut_part is None and plan.empty_reason is None
            and int(plan.bn_ptr[d + 1] - plan.bn_ptr[d]) == 1
            and int(plan.res_ptr[d + 1]) == int(plan.res_ptr[d])
            and int(plan.na_ptr[d + 1]) == int(plan.na_ptr[d]))
