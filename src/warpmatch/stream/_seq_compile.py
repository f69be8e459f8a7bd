"""Compiling and caching the delta plans that :mod:`._seq_special` renders as source.

Map: the cache directory (:func:`cache_dir`) < a module's cache key, its source and the
files of the code it calls (:func:`_key`) < whether it was compiled before
(:func:`is_cached`, :func:`_on_disk`) < writing its source atomically (:func:`_write`) <
importing it, numba compiling or loading each plan's ``cfunc`` (:func:`compile_plans` ->
:class:`SpecialPlans`: each plan's C function address, what
:func:`._seq_kernels.seq_run` calls, and the rows of tag block they need).

Not from a paper: RapidFlow (Sun et al., VLDB 2022) is C++ compiled ahead of time. How
it differs from numba's own caching:

- numba's cache checks only the cached function's own file, so the key also hashes
  the generator's and the helpers' files (an upgrade recompiles).
- One module per plan set, written once under its key and shared by processes.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._seq_special import module_source

__all__ = ["SpecialPlans", "compile_plans", "is_cached", "cache_dir"]


# ------------------------------------------------------------------ compiling
def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/warpmatch/cpu-plans`` (default ``~/.cache/warpmatch/cpu-plans``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "warpmatch" / "cpu-plans"


@dataclass
class SpecialPlans:
    """The compiled searches of one plan set.

    Attributes
    ----------
    addr : numpy.ndarray
        int64 per plan: the C function's address, 0 where the plan is not
        compiled (the interpreting kernel searches it).
    plans : list of int
        The compiled plans.
    seconds : float
        Time spent compiling (or loading from numba's cache) in this process.
    cached : bool
        Whether the module was found compiled on disk (no numba compilation).
    path : Path or None
        The generated module's file.
    tag_rows : int
        Rows of the tag block the compiled plans need (:func:`plan_source`'s ``_x``).
    """

    addr: np.ndarray
    plans: list[int]
    seconds: float = 0.0
    cached: bool = False
    path: Path | None = None
    tag_rows: int = 0
    _keep: list = field(default_factory=list, repr=False)


_LOCK = threading.Lock()
_LOADED: dict[str, SpecialPlans] = {}


_HELPERS: list[bytes] = []


def _key(source: str) -> str:
    """The module's cache key: its source and the sources of the helpers it inlines.

    numba's cache checks only the cached function's own file, so a module compiled
    against older helpers (``_row``, ``_has``, ``_lower``, the raw loads) would be
    loaded unchanged after an upgrade; their files are therefore part of the key (this
    module's own among them, so a change of the generator recompiles too)."""
    if not _HELPERS:
        from ..engine import _raw
        from . import _cpu_rows, _seq_special
        _HELPERS.extend(Path(m.__file__).read_bytes()
                        for m in (sys.modules[__name__], _seq_special, _cpu_rows, _raw))
    h = hashlib.sha256(source.encode())
    for b in _HELPERS:
        h.update(b)
    return h.hexdigest()[:24]


def is_cached(plans: Any, local: bool) -> bool:
    """Whether ``plans``' module was compiled before (in this process, or on disk with
    numba's cache files beside it)."""
    src, take = module_source(plans, local)
    if not take:
        return True
    key = _key(src)
    if key in _LOADED:
        return True
    return _on_disk(cache_dir() / f"m{key}")


def _on_disk(d: Path) -> bool:
    """Whether numba's cache files for the module in ``d`` exist."""
    return (d / "__pycache__").is_dir() and any((d / "__pycache__").glob("*.nbi"))


def _write(d: Path, src: str) -> Path:
    """``d/plans.py`` holding ``src`` (written atomically: another process may read it)."""
    d.mkdir(parents=True, exist_ok=True)
    path = d / "plans.py"
    if not path.exists() or path.read_text() != src:
        tmp = d / f".plans.{os.getpid()}.{threading.get_ident()}.tmp"
        tmp.write_text(src)
        os.replace(tmp, path)
    return path


def compile_plans(plans: Any, local: bool, cached_only: bool = False
                  ) -> SpecialPlans | None:
    """Compile every eligible plan of ``plans`` (once per process and source; numba's
    disk cache makes later processes load them).

    Parameters
    ----------
    cached_only : bool, optional
        Return ``None`` instead of compiling when the module was not compiled
        before (:func:`is_cached`), e.g. ``specialise="auto"`` building a matcher.

    Returns
    -------
    SpecialPlans or None
        ``addr`` all zeros when no plan is eligible.
    """
    src, take = module_source(plans, local)
    P = int(plans.num_plans)
    if not take:
        return SpecialPlans(np.zeros(P, np.int64), [])
    key = _key(src)
    with _LOCK:
        hit = _LOADED.get(key)
        if hit is not None:
            return hit
        d = cache_dir() / f"m{key}"
        cached = _on_disk(d)
        if cached_only and not cached:
            return None
        t0 = time.perf_counter()
        try:
            path = _write(d, src)
        except OSError as exc:          # no writable cache: this process's own directory
            warnings.warn(f"cannot write compiled delta plans under {d} ({exc}); "
                          "compiling them for this process only", RuntimeWarning,
                          stacklevel=2)
            path = _write(Path(tempfile.mkdtemp(prefix="warpmatch-cpu-plans-")), src)
            cached = False
        name = f"_warpmatch_cpu_plans_{key}"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        addr = np.zeros(P, np.int64)
        keep = []
        for j in take:
            fn = getattr(mod, f"plan_{j}")
            keep.append(fn)
            addr[j] = fn.address
        out = SpecialPlans(addr, take, time.perf_counter() - t0, cached, path,
                           int(mod.TAG_ROWS), keep)
        _LOADED[key] = out
        return out
