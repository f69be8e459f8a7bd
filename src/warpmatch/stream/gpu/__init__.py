"""GPU delta engine with a host-resident graph and a GPU cache of hot rows (GCSM).

:class:`GpuDeltaEngine` (:mod:`.engine`) runs the incremental matching of a
batch on the device; :mod:`.walk` estimates which rows it will read (GCSM
§IV) and :mod:`.cache` packs them in DCSR (§V-B). Importing this package
needs numpy and numba only; CuPy is imported when a batch runs.
"""
from __future__ import annotations

from .cache import POLICIES
from .engine import GpuDeltaEngine, pinned_allocator

__all__ = ["GpuDeltaEngine", "POLICIES", "pinned_allocator"]
