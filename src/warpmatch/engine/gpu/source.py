"""The GPU engine's CUDA sources: which text a plan's module is compiled from.

Map: :func:`stack_bytes` / :func:`warps_per_block` (a fine-model warp's stack in shared
memory, and how many fit a block) < :func:`build_source` (the plan's ``#define`` lines and
generated functions, :mod:`.render` or :mod:`.render_generic`, around the kernel files in
``kernels/``) < :func:`module_source` (the exact text an engine compiles, what
:mod:`.precompile` hands to NVRTC ahead of a run). :data:`NVRTC_OPTIONS` are part of
CuPy's kernel-cache key. The execution itself is :mod:`.engine`'s (gMatch sections 4-5).
"""
from __future__ import annotations

from importlib import resources
from typing import Any

from ...plan.plan import Plan
from .render import (DEFAULT_GROUPS, memo, plan_trims, render_functions, render_plan,
                     table_wanted)
from .render_generic import render_functions_generic, render_plan_generic

__all__ = ["NVRTC_OPTIONS", "build_source", "module_source", "stack_bytes", "warps_per_block"]

_SOURCES: dict[str, str] = {}
#: maximum of static shared memory a block may declare
_SMEM_STATIC = 48 * 1024


def _source(name: str) -> str:
    if name not in _SOURCES:
        _SOURCES[name] = resources.files(__package__).joinpath("kernels", name).read_text()
    return _SOURCES[name]


def stack_bytes(k: int, trim: bool = False) -> int:
    """Shared-memory bytes of one warp's execution stack for a ``k``-vertex plan.

    Levels ``0..k-2`` of 32 entries of (vertex int32, list length int32,
    parent uint8, list code uint8, and with ``trim`` the int32 offset of the
    list's restriction range), plus three int32 cursors per level and a
    32-byte scratch row: O(k * 32), independent of the data graph.
    """
    levels = max(k - 1, 1)
    return levels * (32 * (14 if trim else 10) + 12) + 32


def build_source(plan: Plan, kernel: str, *, warps: int, batch: bool = True,
                 list_mode: bool = False, steal: bool = False, profile: bool = False,
                 generic: bool = False, groups: str = DEFAULT_GROUPS) -> str:
    """The complete CUDA source for ``plan`` and one DFS kernel.

    Parameters
    ----------
    plan : Plan
        The plan to specialise for.
    kernel : {"fine", "coarse"}
        Which DFS kernel to include (the BFS kernels are always included).
    warps : int
        Warps per block (``WM_WARPS``).
    batch, list_mode, steal, profile : bool
        ``WM_BATCH``, ``WM_LIST``, ``WM_STEAL`` and ``WM_PROFILE``.
    generic : bool, optional
        The generic module for ``plan``'s size (:mod:`.render_generic`; the plan's
        facts go into its constant ``wm_gp``) instead of one specialised to it.
    groups : str, optional
        Which groups of bare leaves are counted (:data:`.render.LEAF_GROUPS`).

    Returns
    -------
    str
        Source text for NVRTC; it includes no host header.
    """
    defines = "\n".join([
        f"#define WM_WARPS {int(warps)}",
        f"#define WM_BATCH {int(batch)}",
        f"#define WM_LIST {int(list_mode)}",
        f"#define WM_STEAL {int(steal)}",
        f"#define WM_PROFILE {int(profile)}",
    ])
    head, funcs = ((render_plan_generic(plan, groups), render_functions_generic(plan))
                   if generic
                   else (render_plan(plan, groups), render_functions(plan, groups)))
    return "\n".join([head, defines, _source("warp.cuh"), _source("common.cuh"), funcs,
                      _source("bfs.cu"), _source(f"{kernel}.cu")])


def warps_per_block(plan: Plan, model: str, generic: bool = False) -> int:
    """Warps per block of the DFS kernel for ``plan``: as many fine-model stacks as fit
    in a block's static shared memory (at most 8); 4 for the coarse model. The generic
    module's stacks always keep restriction offsets."""
    if model != "fine":
        return 4
    trim = generic or plan_trims(plan)
    return max(1, min(8, _SMEM_STATIC // stack_bytes(int(plan.k), trim)))


def module_source(eng: Any, plan: Plan, list_mode: bool, generic: bool = False) -> str:
    """The exact source that ``eng`` compiles to count (``list_mode=False``) or list
    ``plan``'s matches: what a caller hands to NVRTC ahead of time (e.g. in parallel
    processes, filling CuPy's on-disk kernel cache) to take compilation off a run.
    ``generic``: the generic module for ``plan``'s size (:mod:`.render_generic`).
    Rendered once per plan structure and engine settings (:func:`.render.memo`)."""
    groups = str(getattr(eng, "leaf_groups", DEFAULT_GROUPS))
    what = ("source", eng.model, bool(eng.batch), bool(list_mode), bool(eng.steal),
            bool(eng.profile), bool(generic), groups, table_wanted())
    return memo(plan, repr(what), lambda: build_source(
        plan, eng.model, warps=warps_per_block(plan, eng.model, generic), batch=eng.batch,
        list_mode=list_mode, steal=eng.steal, profile=eng.profile, generic=generic,
        groups=groups))


#: NVRTC options of every module (part of CuPy's kernel-cache key)
NVRTC_OPTIONS = ("-std=c++17",)
