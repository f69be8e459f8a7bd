"""Host memory the GPU delta engine reads: page-locked storage and the per-batch staging.

Map: :func:`pinned_allocator` (page-locked storage for a dynamic graph) <
:class:`_HostMap` (device addresses of host arrays, registering them with
``cudaHostRegister`` when they are not page-locked) < :class:`_Staging` (a
batch's small inputs packed into one pinned buffer and sent with one copy).
Used by :mod:`._device`; GCSM §II-C (zero-copy access to host memory).

What differs from GCSM: storage that is page-locked already (allocated by
:func:`pinned_allocator`) is read where it is, never registered or copied, and
the overlay's pinned buffers go to the device straight from their own memory.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...errors import BackendUnavailableError
from .cache import parallel_copy

#: cudaHostRegisterMapped
_REGISTER_MAPPED = 2
#: cudaMemoryTypeHost (page-locked host memory)
_MEMTYPE_HOST = 1


def pinned_allocator(flags: int = 0) -> Callable[[int, Any], np.ndarray]:
    """An allocator of page-locked host arrays for :class:`DynamicGraph` storage.

    Memory from ``cudaHostAlloc`` is directly readable by the device at the
    same address under unified addressing (every 64-bit CUDA platform), so the
    GPU engine reads such storage by zero-copy without registering it.

    Parameters
    ----------
    flags : int, optional
        ``cudaHostAlloc`` flags. The default is ``0``.

    Returns
    -------
    callable
        ``alloc(count, dtype) -> numpy.ndarray`` (uninitialised, like
        :func:`numpy.empty`); the array keeps its pinned block alive.

    Raises
    ------
    BackendUnavailableError
        CuPy or a CUDA device is missing.

    Examples
    --------
    >>> dg = DynamicGraph(graph, allocator=pinned_allocator())   # doctest: +SKIP
    """
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except Exception as exc:
        raise BackendUnavailableError(f"pinned host memory needs CuPy and a CUDA device: {exc}")

    def alloc(count: int, dtype: Any) -> np.ndarray:
        dt = np.dtype(dtype)
        count = int(count)
        mem = cp.cuda.PinnedMemory(max(count * dt.itemsize, 1), flags)
        ptr = cp.cuda.PinnedMemoryPointer(mem, 0)
        return np.frombuffer(ptr, dtype=dt, count=count)

    return alloc


def _owner(a: np.ndarray) -> np.ndarray:
    """The array that owns ``a``'s buffer (``a`` itself when it owns it)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _page_locked(cp: Any, addr: int) -> bool:
    """Is host address ``addr`` page-locked (pinned or registered) memory?"""
    try:
        return int(cp.cuda.runtime.pointerGetAttributes(addr).type) == _MEMTYPE_HOST
    except Exception:     # not memory CUDA knows (older runtimes raise instead)
        return False


class _HostMap:
    """Device addresses of host arrays: pinned already, or registered here (mapped)."""

    def __init__(self, cp: Any) -> None:
        self.cp = cp
        self.reg: dict[tuple[int, int], tuple[np.ndarray, int, bool]] = {}
        self.used: set[tuple[int, int]] = set()
        self.fallback_bytes = 0

    def ptr(self, a: np.ndarray) -> tuple[int, Any]:
        """``(device address, keep-alive)``; a device copy if the array cannot be mapped."""
        if a.size == 0:
            return 0, None
        if not a.flags.c_contiguous:
            dev = self.cp.asarray(np.ascontiguousarray(a))
            self.fallback_bytes += a.nbytes
            return int(dev.data.ptr), dev
        # register the whole owning buffer once: views of it (a prefix of the storage
        # arrays, say) then share one registration
        owner = _owner(a)
        if not owner.flags.c_contiguous:
            owner = a
        delta = int(a.ctypes.data) - int(owner.ctypes.data)
        dptr, alive = self._map(owner)
        return (dptr + delta if dptr else dptr), alive

    def _map(self, a: np.ndarray) -> tuple[int, Any]:
        rt = self.cp.cuda.runtime
        key = (int(a.ctypes.data), int(a.nbytes))
        self.used.add(key)
        hit = self.reg.get(key)
        if hit is not None:
            return hit[1], None
        mine = False
        try:
            if not _page_locked(self.cp, key[0]):
                rt.hostRegister(key[0], key[1], _REGISTER_MAPPED)
                mine = True
            dptr = int(rt.pointerGetAttributes(key[0]).devicePointer)
        except Exception:
            # e.g. a small array sharing a page with a registered one: copy it instead
            self.used.discard(key)
            dev = self.cp.asarray(a)
            self.fallback_bytes += a.nbytes
            return int(dev.data.ptr), dev
        self.reg[key] = (a, dptr, mine)
        return dptr, None

    def release_unused(self) -> None:
        """Unregister the arrays the last batch did not use (replaced storage)."""
        for key in list(self.reg):
            if key not in self.used:
                a, _, mine = self.reg.pop(key)
                if mine:
                    try:
                        self.cp.cuda.runtime.hostUnregister(key[0])
                    except Exception:
                        pass
        self.used = set()

    def close(self) -> None:
        self.used = set()
        self.release_unused()


def _addr(a: np.ndarray) -> int:
    """Data address of a host array (0 if empty): the identity of a storage buffer.

    Storage buffers are allocated before the ones they replace are freed
    (growth and compaction copy from the old array), so a new buffer never
    takes the address of the one it replaces; ``id()`` of the per-batch
    slices would change every batch.
    """
    return int(a.ctypes.data) if a.size else 0


class _Staging:
    """The per-batch inputs, packed in one pinned buffer and sent with one copy.

    Each array goes at a 16-byte aligned offset of one device buffer; :meth:`send`
    returns their device addresses (0 for empty arrays, which the kernel reads
    as "absent"). Arrays in page-locked memory (the dynamic graph's overlay,
    built in pinned buffers when the engine supplies the allocator) are copied
    to the device directly; the others are packed into the pinned staging
    buffer first and sent together. The staging buffer is reused: the previous
    batch's copy has completed by then, since every batch ends by reading its
    results back.
    """

    #: arrays at least this large are sent from their own memory when it is pinned
    DIRECT = 1 << 16

    def __init__(self, cp: Any) -> None:
        self.cp = cp
        self.host: np.ndarray | None = None
        self._mem: Any = None
        self.dev: Any = None
        self._pinned: dict[int, bool] = {}   # owner buffer address -> page-locked?

    def _is_pinned(self, a: np.ndarray) -> bool:
        key = int(_owner(a).ctypes.data)
        hit = self._pinned.get(key)
        if hit is None:
            hit = _page_locked(self.cp, key)
            if len(self._pinned) > 64:
                self._pinned.clear()
            self._pinned[key] = hit
        return hit

    def send(self, parts: list[np.ndarray]) -> list[int]:
        cp = self.cp
        rt = cp.cuda.runtime
        # staged arrays first (one copy of a prefix of the staging buffer), then the
        # pinned ones, each copied from its own memory
        direct = [a.nbytes >= self.DIRECT and a.flags.c_contiguous and self._is_pinned(a)
                  for a in parts]
        offs = [0] * len(parts)
        pos = 0
        for want in (False, True):
            if want:
                staged = pos
            for i, a in enumerate(parts):
                if direct[i] == want:
                    offs[i] = pos
                    pos += (a.nbytes + 15) // 16 * 16
        if self.host is None or self.host.size < max(staged, 16):
            cap = max(staged, 16, int(1.5 * (0 if self.host is None else self.host.size)))
            self._mem = cp.cuda.alloc_pinned_memory(cap)
            self.host = np.frombuffer(self._mem, dtype=np.uint8, count=cap)
        if self.dev is None or self.dev.size < max(pos, 16):
            self.dev = cp.empty(max(pos, 16, int(1.5 * (0 if self.dev is None
                                                       else self.dev.size))), dtype=cp.uint8)
        stream = cp.cuda.get_current_stream()
        dev0 = int(self.dev.data.ptr)
        for a, o, d in zip(parts, offs, direct):
            if a.nbytes and not d:
                parallel_copy(self.host[o:o + a.nbytes],
                              np.ascontiguousarray(a).view(np.uint8).reshape(-1))
        if staged:
            rt.memcpyAsync(dev0, int(self.host.ctypes.data), staged, rt.memcpyHostToDevice,
                           stream.ptr)
        for a, o, d in zip(parts, offs, direct):
            if d:
                rt.memcpyAsync(dev0 + o, int(a.ctypes.data), a.nbytes, rt.memcpyHostToDevice,
                               stream.ptr)
        return [dev0 + o if a.nbytes else 0 for a, o in zip(parts, offs)]

    def array(self, ptr: int, n: int, dtype: Any) -> Any:
        """A device array over ``n`` elements sent at address ``ptr``."""
        cp = self.cp
        if n == 0:
            return cp.empty(0, dtype=dtype)
        off = ptr - int(self.dev.data.ptr)
        return cp.ndarray((n,), dtype=dtype, memptr=self.dev.data + off)
