"""A sibling benchmark as a module, for the scripts in ``bench/``.

``bench/`` is not a package, and ``distributed.py`` is also the name of Dask's package, so
a plain ``import distributed`` from a script here could find the wrong one: :func:`load`
reads ``bench/NAME.py`` by path, once per process.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
_MODULES: dict[str, ModuleType] = {}


def load(name: str) -> ModuleType:
    """``bench/<name>.py`` as a module (executed on first use, then kept)."""
    mod = _MODULES.get(name)
    if mod is None:
        spec = importlib.util.spec_from_file_location(f"wm_bench_{name}", HERE / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        # registered first, as importlib's own recipe does: dataclasses (and pickle)
        # look their module up in sys.modules while it executes
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        _MODULES[name] = mod
    return mod
