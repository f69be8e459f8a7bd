"""NVRTC modules, packed plans and fused kernels of the GPU delta engine.

Map: :func:`_source` (``kernels/delta.cu`` with the static engine's warp
helpers) < the module cache ``_MODULES`` (filled by
:meth:`._device._DeviceState._module`) < :func:`_pack_plans` (delta plans as
the ints the kernel keeps in constant memory) and :func:`_set_const` (load
them, and the batch's pointers, into a module) < :func:`_kernels` (the cache
selection's fused elementwise kernels). GCSM §V-C's matching kernel is
``kernels/delta.cu``; this module only builds and feeds it.

What differs from GCSM: the plans are data in constant memory, not code, so one
compiled module serves every query of a size and mode.
"""
from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np

from ...errors import BudgetError
from ..types import DeltaPlans

_MODULES: dict[tuple, Any] = {}
_SOURCE: list[str] = []
_KERNELS: dict[str, Any] = {}    # the row selection's elementwise kernels (_kernels)
_PLAN_OF: dict[int, np.ndarray] = {}   # id(module) -> the packed plans in its constant memory
#: ints of packed delta plans in constant memory (48 KiB)
PLAN_CAP = 12288
#: counters (kernels/delta.cu)
_C_TASK, _C_B_STORE, _C_B_CACHE, _C_B_OVL, _C_R_STORE, _C_R_CACHE, _C_R_OVL = range(7)
_C_N = 8


def _source() -> str:
    if not _SOURCE:
        # the warp helpers shared with the static engine (gMatch's task-pool step)
        warp = resources.files("warpmatch.engine.gpu").joinpath("kernels", "warp.cuh")
        kern = resources.files(__package__).joinpath("kernels")
        # the matching kernel, then the storage upkeep kernels (one module for both)
        _SOURCE.append("\n".join([warp.read_text(), kern.joinpath("delta.cu").read_text(),
                                   kern.joinpath("storage.cu").read_text()]))
    return _SOURCE[0]


def _fmt(nbytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if nbytes < 1024 or unit == "GiB":
            return f"{nbytes:.1f} {unit}" if unit != "B" else f"{int(nbytes)} B"
        nbytes /= 1024
    return f"{nbytes} B"


#: :func:`.cache.row_capacity` and :func:`.cache.row_bytes` in C, for the selection's
#: fused kernels (tests/gpu/test_stream_gpu.py checks them against the Python ones)
_ROW_C = """
__device__ __forceinline__ long long wm_cap(long long d) { return d + (d + 15) / 16; }
__device__ __forceinline__ long long wm_cost(const int* d0, const int* d1, long long v,
                                             int per, int dirs) {
  long long c = wm_cap(d0[v]) * per + 12;
  if (dirs == 2) c += wm_cap(d1[v]) * per + 12;
  return c;
}
"""


def _kernels(cp: Any) -> dict[str, Any]:
    """The row selection's fused elementwise kernels, built on first use.

    ``density``: caching each row's score per byte (0 where the score is not
    positive, or with ``excl`` where the batch touched the row: the overlay
    serves it). ``cost``: bytes of caching rows ``v``. ``fill_cost``: the same,
    0 for rows taken already or touched, and whether the row may be taken.
    ``cap``: a cached row's entries. Each replaces a chain of CuPy operations
    (a launch each, tens of microseconds of host time) on a path that runs every
    sampled batch.
    """
    if not _KERNELS:
        ek = cp.ElementwiseKernel
        _KERNELS["density"] = ek(
            "float32 s, raw int32 d0, raw int32 d1, raw int32 o0, raw int32 o1, int32 per, "
            "int32 dirs, bool excl", "float32 dens",
            "dens = (s > 0.0f && !(excl && (o0[i] >= 0 || o1[i] >= 0)))"
            " ? s / (float)wm_cost(&d0[0], &d1[0], i, per, dirs) : 0.0f",
            "wm_row_density", preamble=_ROW_C)
        _KERNELS["cost"] = ek(
            "int32 v, raw int32 d0, raw int32 d1, int32 per, int32 dirs", "int64 c",
            "c = wm_cost(&d0[0], &d1[0], v, per, dirs)", "wm_row_cost", preamble=_ROW_C)
        _KERNELS["fill_cost"] = ek(
            "int32 v, raw int32 d0, raw int32 d1, raw int32 o0, raw int32 o1, raw bool taken, "
            "int32 per, int32 dirs", "int64 c, bool ok",
            "ok = !taken[v] && o0[v] < 0 && o1[v] < 0;"
            " c = ok ? wm_cost(&d0[0], &d1[0], v, per, dirs) : 0",
            "wm_row_fill_cost", preamble=_ROW_C)
        _KERNELS["cap"] = ek("int32 v, raw int32 deg", "int64 c", "c = wm_cap(deg[v])",
                             "wm_row_cap", preamble=_ROW_C)
    return _KERNELS


def _pack_plans(plans: DeltaPlans) -> np.ndarray:
    """The delta plans as one int32 block: 14 offsets, then the arrays (kernels/delta.cu)."""
    parts = [plans.order, plans.vlabel, plans.bn_ptr, plans.bn_pos, plans.bn_dir,
             plans.bn_elabel, plans.na_ptr, plans.na_pos, plans.na_dir, plans.res_ptr,
             plans.res_pos, plans.res_sign, plans.pair_kind, plans.pair_elabel]
    flat = [np.ascontiguousarray(p, dtype=np.int32).reshape(-1) for p in parts]
    offs = np.zeros(14, dtype=np.int64)
    pos = 14
    for i, f in enumerate(flat):
        offs[i] = pos
        pos += f.size
    if pos > PLAN_CAP:
        raise BudgetError(f"the delta plans take {pos} ints of constant memory; the GPU "
                          f"engine holds {PLAN_CAP} (a query of {plans.k} vertices with "
                          f"{plans.num_plans} plans is too large for it)")
    buf = np.zeros(pos, dtype=np.int32)
    buf[:14] = offs
    buf[14:pos] = np.concatenate(flat)
    return buf


def _mix64(x: int) -> int:
    """splitmix64's finaliser on the host: the sampler's seed per (engine seed, batch).

    The kernel's coins hash ``seed + a * golden + b * c2`` (kernels/delta.cu
    ``wm_coin``), linear in the sub-task id ``a``: a seed that were itself
    ``engine_seed * golden`` would make seed ``s + 1``'s coins those of seed ``s``
    shifted by one sub-task, so runs with nearby seeds would share their samples.
    """
    m = (1 << 64) - 1
    z = (int(x) + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def _set_const(cp: Any, mod: Any, ptrs: np.ndarray, plan_buf: np.ndarray) -> None:
    """Set a module's constant block and, unless it holds them already, its plans."""
    mem = mod.get_global("g")
    cp.ndarray((ptrs.size,), dtype=cp.uint64, memptr=mem).set(ptrs)
    # a module is shared by every engine: remember which packed plans it holds (the
    # buffer itself, kept alive, so that its identity cannot be reused)
    if _PLAN_OF.get(id(mod)) is not plan_buf:
        pm = mod.get_global("wm_plan")
        cp.ndarray((plan_buf.size,), dtype=cp.int32, memptr=pm).set(plan_buf)
        _PLAN_OF[id(mod)] = plan_buf
