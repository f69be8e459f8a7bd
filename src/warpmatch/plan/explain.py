"""A readable description of a :class:`~warpmatch.plan.plan.Plan` (``warpmatch explain``).

The text follows the Plan contract depth by depth (rules 1–7 of
:mod:`warpmatch.plan.plan`), naming query vertices by their DSL names, so a
user can see why a query is slow (a huge root set, an order that starts on a
weak vertex) or why the answer is 0 (``empty_reason``).

Examples
--------
>>> from warpmatch.graph.csr import Graph
>>> from warpmatch.query.model import Query
>>> from warpmatch.plan.build import build_plan
>>> g = Graph.from_edges([0, 1, 2], [1, 2, 0])
>>> print(explain_plan(build_plan(g, Query.from_edges([(0, 1), (1, 2)]))).splitlines()[0])
query 'query': 0-1, 1-2  (3 vertices, 2 edges, undirected)
"""
from __future__ import annotations

import math

from ..query.model import labeled_clique_reason
from .plan import Plan

#: the most partitions ``explain`` lists to say how many terms are left once swaps of
#: twins are merged (human's 90,433 of ``query_dense_16_4``: 0.2 s)
EXPLAIN_ORBITS_MAX = 100_000


def _name(plan: Plan, u: int) -> str:
    q = plan.query
    return q.names[u] if q is not None else str(u)


def _label(lab: int) -> str:
    return "*" if lab == -1 else str(lab)


def _filter_steps(plan: Plan, u: int) -> str:
    """``"; label/degree 1,234 -> NLF 456 -> refined 78"``: the candidates of ``u``
    after each filter (issue 23: before and after filtering)."""
    c = plan.filter_counts.get(u)
    if not c:
        return ""
    text = f"; label/degree {c['ldf']:,}"
    if c["nlf"] != c["ldf"]:
        text += f" -> NLF {c['nlf']:,}"
    if "refined" in c:
        text += f" -> refined {c['refined']:,}"
    return text


def explain_plan(plan: Plan) -> str:
    """Describe ``plan`` in readable lines.

    Parameters
    ----------
    plan : Plan
        A plan from :func:`~warpmatch.plan.build.build_plan`.

    Returns
    -------
    str
        Multi-line text: the query, the semantics (mode, induced, direction),
        the automorphism group and multiplier, the order, then one block per
        depth with its label, degree bound, candidate set, backward
        neighbours, induced non-edges and symmetry-breaking restrictions;
        and why the answer is 0 when planning proved it.
    """
    q = plan.query
    lines: list[str] = []
    if q is not None:
        kind = "directed" if q.directed else "undirected"
        lines.append(f"query {q.name!r}: {q.to_dsl()}  ({q.k} vertices, {q.m} edges, {kind})")
    else:
        lines.append(f"query: {plan.k} vertices")
    mode = ("embeddings (every injective map)" if plan.mode == "embeddings"
            else "subgraphs (each distinct subgraph once)")
    lines.append(f"mode: {mode}; {'induced' if plan.induced else 'non-induced'}; "
                 f"graph {'directed' if plan.directed else 'undirected'}")
    n_res = int(plan.res_ptr[-1])
    if plan.multiplier != 1:
        sym = (f"|Aut| = {plan.aut_size}; {n_res} symmetry-breaking restrictions; "
               f"count = raw matches x {plan.multiplier}")
    elif n_res:
        sym = f"|Aut| = {plan.aut_size}; {n_res} symmetry-breaking restrictions; multiplier 1"
    else:
        sym = f"|Aut| = {plan.aut_size}; no symmetry breaking; multiplier 1"
    lines.append(sym)
    lines.append(f"order ({plan.order_name}): "
                 + ", ".join(_name(plan, int(u)) for u in plan.order))
    if plan.order_name == "auto":
        from .rival import RACE_AFTER, rival_orders
        rivals = rival_orders(plan)       # the orders only: no rival plan is built
        if rivals:
            lines.append(f"  (ri's; a count with a limit on the cpu engine that has not reached "
                         f"it after {RACE_AFTER} s also searches in the "
                         + " and ".join(name for name, _ in rivals)
                         + (" orders" if len(rivals) > 1 else " order")
                         + " and in random orders one after another, taking turns, the "
                           "first to reach it answering)")
            for name, order in rivals:
                lines.append(f"  {name}: " + ", ".join(_name(plan, u) for u in order))
    if plan.refine_passes:
        lines.append(f"candidate refinement: {plan.refine_passes} pass(es) over the query "
                     "edges (a candidate needs a candidate neighbour across every query edge)")
    if plan.anchors:
        lines.append("anchors: " + ", ".join(
            f"{_name(plan, int(u))} -> {n} id{'s' if n != 1 else ''}"
            for u, n in sorted(plan.anchors.items())))
    arrow = "->" if plan.directed else "-"
    for i in range(plan.k):
        u = int(plan.order[i])
        un = _name(plan, u)
        if plan.directed:
            deg = (f"out-degree >= {int(plan.min_out_deg[i])}, "
                   f"in-degree >= {int(plan.min_in_deg[i])}")
        else:
            deg = f"degree >= {int(plan.min_out_deg[i])}"
        lines.append(f"depth {i}: {un}  label {_label(int(plan.vlabel[i]))}, {deg}")
        size = int(plan.cand_ptr[i + 1] - plan.cand_ptr[i])
        steps = _filter_steps(plan, u)
        if i == 0:
            anchored = " (anchored)" if u in plan.anchors else ""
            lines.append(f"  candidates: {size:,} roots{anchored}{steps}")
        elif plan.cand_restricted[i]:
            why = "anchored" if u in plan.anchors else "filtered"
            lines.append(f"  candidates: restricted to {size:,} ids ({why}){steps}")
        else:
            lines.append(f"  candidates: unrestricted (label and degree checked){steps}")
        lo, hi = int(plan.bn_ptr[i]), int(plan.bn_ptr[i + 1])
        if hi > lo:
            parts = []
            for t in range(lo, hi):
                wn = _name(plan, int(plan.order[int(plan.bn_pos[t])]))
                edge = f"{wn}{arrow}{un}" if int(plan.bn_dir[t]) == 0 else f"{un}{arrow}{wn}"
                el = int(plan.bn_elabel[t])
                parts.append(edge + ("" if el == -1 else f" [label {el}]"))
            lines.append("  backward edges: " + ", ".join(parts)
                         + "  (candidates from the first one's adjacency)")
        lo, hi = int(plan.na_ptr[i]), int(plan.na_ptr[i + 1])
        if hi > lo:
            parts = []
            for t in range(lo, hi):
                wn = _name(plan, int(plan.order[int(plan.na_pos[t])]))
                parts.append(f"{wn}{arrow}{un}" if int(plan.na_dir[t]) == 0 else f"{un}{arrow}{wn}")
            lines.append("  non-edges (induced): no " + ", no ".join(parts))
        lo, hi = int(plan.res_ptr[i]), int(plan.res_ptr[i + 1])
        if hi > lo:
            parts = []
            for t in range(lo, hi):
                wn = _name(plan, int(plan.order[int(plan.res_pos[t])]))
                op = ">" if int(plan.res_sign[t]) == 1 else "<"
                parts.append(f"f({un}) {op} f({wn})")
            lines.append("  restrictions: " + ", ".join(parts))
    from .leaves import MIXED_MAX, indep_group, leaf_group, twin_group
    grp = leaf_group(plan, True, True)      # labels the graph lacks left the plan empty
    indep = leaf_group(plan, True, True, MIXED_MAX, True)
    twins = twin_group(plan, True, True, checks=True)
    gpu_indep = indep_group(plan)           # (its leaf table switched on, as by default)
    # the CPU engine counts independent vertices where they are longer than the plain
    # group and than twins (engine.cpu._program); the GPU engine two or three of them
    # where that saves scans (indep_group)
    if indep is not None and indep.multi and plan.empty_reason is None and (
            grp is None or indep.first < grp.first) and (
            twins is None or indep.first < twins.first):
        names = ", ".join(_name(plan, int(u)) for u in plan.order[indep.first:])
        same = gpu_indep is not None and gpu_indep.first == indep.first
        engines = "cpu and gpu engines" if same else "cpu engine"
        lines.append(f"counted, not enumerated (count mode, {engines}): {names}, "
                     "independent vertices (no edge among them, no restriction), each from "
                     "its own intersection of its matched neighbours' lists, with their "
                     "overlaps: inclusion-exclusion (cpu engine: enumerated where their "
                     "sets are too small to pay, engine.cpu.MULTI_WORTH, MULTI_MIN; gpu "
                     "engine: the whole warp scans each set for one partial match)")
        if gpu_indep is not None and not same:
            lines.append("  (the gpu engine counts the last "
                         f"{plan.k - gpu_indep.first} of them so)")
        grp = None
        indep_shown = True
    else:
        indep_shown = False
    if grp is not None and plan.empty_reason is None:
        # the GPU engine counts alike leaves by default (engine.gpu.render.leaf_first: bare
        # ones from the list size, others from a table), mixed ones only when told
        engines = "cpu and gpu engines" if not grp.mixed else "cpu engine"
        names = ", ".join(_name(plan, int(u)) for u in plan.order[grp.first:])
        if grp.mixed:
            parents = ", ".join(
                _name(plan, int(plan.order[int(plan.bn_pos[int(plan.bn_ptr[d])])]))
                for d in range(grp.first, plan.k))
            lines.append(f"counted, not enumerated (count mode, {engines}): {names}, leaves "
                         f"of {parents} (in that order), from their lists' sizes and "
                         "overlaps: inclusion-exclusion")
        else:
            how = "C(s, j): their restrictions order them" if grp.chain else "s (s-1) ... (s-j+1)"
            lines.append(f"counted, not enumerated (count mode, {engines}): {names}, leaves of "
                         f"{_name(plan, int(plan.order[grp.parent]))}, from the s entries of its "
                         f"list they may take: {how}")
        if plan.cand_restricted[grp.first:].any():
            lines.append("  (leaves with candidate sets: counted where their sets are long "
                         "enough to pay, else enumerated, per partial match)")
    from .leaves import table_leaf
    if twins is not None:
        d0 = twins.first
        names = ", ".join(_name(plan, int(u)) for u in plan.order[d0:])
        nbrs = ", ".join(_name(plan, int(plan.order[int(p)])) for p in sorted(
            set(plan.bn_pos[int(plan.bn_ptr[d0]):int(plan.bn_ptr[d0 + 1])].tolist())))
        how = "C(s, j): their restrictions order them" if twins.chain else "s (s-1) ... (s-j+1)"
        # both engines count them (render.twin_leaves on the GPU); twins with checks are
        # tested once per entry of the intersection
        bare = twin_group(plan, True, True)
        engines = "gpu engine" if indep_shown else "cpu and gpu engines"
        checked = ("" if bare is not None and bare.first == d0
                   else ", their checks made once per candidate")
        lines.append(f"counted, not enumerated (count mode, {engines}): {names}, twins (each "
                     f"adjacent to {nbrs} only), from the s vertices of one intersection of "
                     f"lists they may take{checked}: {how}")
    if table_leaf(plan):
        d = plan.k - 1
        checks = [w for w, on in (
            ("label", int(plan.vlabel[d]) != -1),
            ("edge label", int(plan.bn_elabel[int(plan.bn_ptr[d])]) != -1),
            ("candidate set", bool(plan.cand_restricted[d]))) if on]
        if checks:
            parent = _name(plan, int(plan.order[int(plan.bn_pos[int(plan.bn_ptr[d])])]))
            lines.append(f"counted, not enumerated (count mode, cpu and gpu engines): "
                         f"{_name(plan, int(plan.order[d]))}, a leaf of {parent}, from a table "
                         f"of the entries of {parent}'s list that pass its checks "
                         f"({', '.join(checks)}), counted once per data vertex, less the "
                         "matched vertices")
    from .factor import FACTOR_AFTER, plan_factoring
    fac = plan_factoring(plan)
    if fac is not None:
        cut = _name(plan, fac.cut)
        lines.append(f"factored (a full count the direct search has not finished in "
                     f"{FACTOR_AFTER:g} s): at {fac.describe(q)}; the groups share no vertex "
                     f"label, so the count is the sum over {cut}'s candidates of the product "
                     f"of each group's count with {cut} fixed, each group searched alone")
    if labeled_clique_reason(q) is None:
        lines.append(f"from the data's cliques (a full count the direct search has not "
                     f"finished in {FACTOR_AFTER:g} s, tried first): a complete query whose "
                     f"vertices all have labels, counted as the data cliques with its label "
                     f"counts, found by pivoting (Pivoter), times the bijections that keep "
                     f"the labels")
    from .spasm import HOM_BUDGET_S, class_partitions, plan_spasm, twin_orbits
    n = plan_spasm(plan)
    if n is not None:
        # the terms after swaps of twins are merged (listed only where cheap to list)
        merged = ""
        if n <= EXPLAIN_ORBITS_MAX:
            reps, _ = twin_orbits(plan.query, class_partitions(plan.query))
            terms = math.prod(len(p) for p in reps)
            if terms < n:
                merged = f" ({terms:,} up to swaps of twins, each one term)"
        when = (f"where it projects under {HOM_BUDGET_S:g} s, or under the time left of a "
                f"longer time limit" if fac is None else
                "where it ends within a first half-second try or projects to end "
                "before the factored count, whose pace its first second shows")
        lines.append(f"from homomorphisms (a full count the direct search has not "
                     f"finished in {FACTOR_AFTER:g} s, where the graph has vertex labels, "
                     f"{when}): the "
                     f"sum over the query's {n:,} partitions into same-label independent sets"
                     f"{merged} (less those with a block whose members share no candidate) of "
                     f"+-hom(quotient), each by variable elimination")
    if plan.empty_reason:
        lines.append(f"empty: {plan.empty_reason}")
    return "\n".join(lines)

