"""The device's facts the GPU engines ask for: whether CUDA is usable, the device's
properties (once per process), and how many blocks of a kernel run at once.

Map: :func:`cuda_available` < :func:`device_properties` < :func:`resident_blocks`. Used by
the static engine (:mod:`.engine`) and the continuous one (:mod:`warpmatch.stream.gpu`).
"""
from __future__ import annotations

from typing import Any

__all__ = ["cuda_available", "device_properties", "resident_blocks"]


def cuda_available(device: int = 0) -> tuple[bool, str]:
    """``(True, "")`` if CuPy loads and CUDA device ``device`` exists, else ``(False, why)``."""
    try:
        import cupy as cp
    except Exception as exc:  # ImportError, or a broken CUDA install
        return False, (f"CuPy is not installed or cannot load ({exc.__class__.__name__}: "
                       f"{exc}); install warpmatch[cuda13] or warpmatch[cuda12]")
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return False, f"no CUDA device is usable ({exc})"
    if n <= device:
        return False, (f"no CUDA device {device}: {n} device(s) found"
                       if n else "no CUDA device found")
    return True, ""


_PROPS: dict[int, dict] = {}


def device_properties(cp: Any, device: int) -> dict:
    """``cudaGetDeviceProperties`` of ``device``, asked once per process: the call takes
    about a millisecond, as long as a small search."""
    props = _PROPS.get(device)
    if props is None:
        props = _PROPS[device] = dict(cp.cuda.runtime.getDeviceProperties(device))
    return props


def resident_blocks(cp: Any, fn: Any, threads: int, sms: int) -> int:
    """Blocks of ``threads`` threads of kernel ``fn`` (a ``cupy.RawKernel``) that the
    device runs at once: the occupancy calculator's blocks per SM times the SMs."""
    per_sm = 0
    try:
        per_sm = int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            int(fn.kernel.ptr), threads, 0))
    except Exception:   # an older CuPy without RawKernel.kernel: assume 32 warps per SM
        per_sm = max(1, 1024 // threads)
    return max(1, per_sm) * sms
