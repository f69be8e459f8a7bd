"""Compiling the GPU engine's modules ahead of time, in parallel processes.

Map: :func:`compile_source` (one source into CuPy's on-disk kernel cache) <
:func:`precompile` (distinct sources in spawned processes) < :func:`_main` (``python -m``:
one source from stdin, then its marker, for ``compile="auto"``'s background compiles,
:mod:`.modules`). The sources are
:func:`.engine.module_source`'s, compiled with :data:`.engine.NVRTC_OPTIONS`, so the
engine's own compile of the same plan then reads the cache (CuPy keys it by source
and options). Used by the benchmarks to keep compilation off the device's clock.
"""
from __future__ import annotations

from typing import Iterable

from .source import NVRTC_OPTIONS

__all__ = ["compile_source", "precompile"]


def compile_source(src: str) -> None:
    """Compile one module source (:func:`.engine.module_source`) into CuPy's on-disk
    kernel cache, which the engine's own compile of the same source then reads. A module-level
    function so that spawned processes can import it by name (:func:`precompile`)."""
    import cupy as cp

    from .modules import mark_compiled
    cp.RawModule(code=src, options=NVRTC_OPTIONS).compile()
    # compile="auto" then takes this source's module (modules.py), not the generic one
    cc = cp.cuda.Device().compute_capability
    mark_compiled(src, str(cc))


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



def _main(argv: list[str] | None = None) -> int:
    """``python -m warpmatch.engine.gpu.precompile --arch CC``: compile the source read
    from stdin into CuPy's disk cache, then write its marker (:mod:`.modules`); what
    ``compile="auto"`` starts in the background."""
    import argparse
    import sys

    from .modules import mark_compiled
    ap = argparse.ArgumentParser(prog="python -m warpmatch.engine.gpu.precompile")
    ap.add_argument("--arch", required=True, help="compute capability, e.g. 90")
    args = ap.parse_args(argv)
    src = sys.stdin.read()
    compile_source(src)
    mark_compiled(src, args.arch)       # (the device may differ from the engine's)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
