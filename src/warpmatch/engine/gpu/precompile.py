"""Compiling the GPU engine's modules ahead of time, in parallel processes.

Map: :func:`compile_source` (one source into CuPy's on-disk kernel cache) <
:func:`precompile` (distinct sources in spawned processes). The sources are
:func:`.engine.module_source`'s, compiled with :data:`.engine.NVRTC_OPTIONS`, so the
engine's own compile of the same plan then reads the cache (CuPy keys it by source
and options). Used by the benchmarks to keep compilation off the device's clock.
"""
from __future__ import annotations

from typing import Iterable

from .engine import NVRTC_OPTIONS

__all__ = ["compile_source", "precompile"]


def compile_source(src: str) -> None:
    """Compile one module source (:func:`.engine.module_source`) into CuPy's on-disk
    kernel cache, which the engine's own compile of the same source then reads. A module-level
    function so that spawned processes can import it by name (:func:`precompile`)."""
    import cupy as cp
    cp.RawModule(code=src, options=NVRTC_OPTIONS).compile()


def precompile(sources: Iterable[str], processes: int | None = None) -> int:
    """Compile the distinct ``sources`` ahead of time, in parallel processes.

    One module takes seconds of one core (measured with nvcc --cubin on our
    sources: 1.6-5.4 s for 16- to 32-vertex labeled queries), and a run may need dozens; compiled
    side by side into CuPy's on-disk cache, they cost the wall time of the
    slowest few (36 modules: 17 s in 16 processes on the H100 host). The
    processes are spawned, not forked: CUDA state does not survive a fork.

    Parameters
    ----------
    sources : iterable of str
        Module sources (:func:`.engine.module_source`); repeats are compiled once.
    processes : int, optional
        At most this many processes. The default is ``None``: one per CPU core,
        and no more than there are sources.

    Returns
    -------
    int
        Distinct sources compiled (one or none compile in this process).
    """
    import multiprocessing as mp
    import os
    srcs = sorted(set(sources))
    if len(srcs) < 2:
        for src in srcs:
            compile_source(src)
        return len(srcs)
    procs = max(1, min(len(srcs), int(processes or os.cpu_count() or 1)))
    with mp.get_context("spawn").Pool(procs) as pool:
        pool.map(compile_source, srcs, chunksize=1)
    return len(srcs)

