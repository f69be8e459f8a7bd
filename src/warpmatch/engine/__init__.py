"""The one backend registry: which engines exist, whether they can run here, and ``auto``.

Map of this module:

- ``_REGISTRY``: backend name -> (module path, class name, what it needs),
  filled at import time with the three built-in engines and extended by
  :func:`register_engine`. Nothing is imported until an engine is asked for,
  so ``import warpmatch`` never pulls in numba or CuPy.
- ``_INSTANCES``: engine objects created so far (one per name; engines are
  stateless apart from caches such as compiled kernels, so sharing is safe).
- :func:`get_engine`: the engine object for a name (imports its module).
- :func:`available_backends`: name -> (can run here, reason if not).
- :func:`resolve_backend`: the user's ``backend=`` argument -> an engine that
  can run; ``"auto"`` prefers gpu, then cpu, then reference.

Callers (``api.py``, the CLI, benchmarks) go through :func:`resolve_backend`;
no code elsewhere branches on a backend's name (STYLE.md, after networkx's
``backends.py``).

Examples
--------
>>> get_engine("reference").name
'reference'
>>> available_backends()["reference"]
(True, '')
"""
from __future__ import annotations

import importlib

from ..errors import BackendUnavailableError
from .base import Engine, Progress, Stop

#: the order in which ``auto`` tries backends
AUTO_PREFERENCE = ("gpu", "cpu", "reference")

_REGISTRY: dict[str, tuple[str, str, str]] = {
    "reference": ("warpmatch.engine.reference", "ReferenceEngine", "nothing but numpy"),
    "cpu": ("warpmatch.engine.cpu", "CpuEngine", "numba"),
    "gpu": ("warpmatch.engine.gpu", "GpuEngine", "CuPy and a CUDA device"),
}
_INSTANCES: dict[str, Engine] = {}


def register_engine(name: str, module: str, cls: str, needs: str = "") -> None:
    """Register an engine class under ``name`` (imported lazily on first use).

    Parameters
    ----------
    name : str
        The backend name users pass as ``backend=``.
    module : str
        Dotted module path, e.g. ``"mypkg.engine"``.
    cls : str
        Class name in that module; it is instantiated without arguments and
        must implement :class:`~warpmatch.engine.base.Engine`.
    needs : str, optional
        What it needs, for error messages ("CuPy and a CUDA device").
    """
    _REGISTRY[name] = (module, cls, needs)
    _INSTANCES.pop(name, None)


def backend_names() -> list[str]:
    """Names of the registered backends (``"auto"`` not included)."""
    return list(_REGISTRY)


def _unknown(name: str) -> BackendUnavailableError:
    return BackendUnavailableError(
        f"unknown backend {name!r}; choose from auto, {', '.join(_REGISTRY)}")


def _needs_message(name: str, reason: str) -> str:
    needs = _REGISTRY[name][2]
    head = f"backend {name!r} needs {needs}" if needs else f"backend {name!r} is unavailable"
    return f"{head}: {reason}" if reason else head


def get_engine(name: str) -> Engine:
    """The engine registered as ``name``.

    It is returned even if it cannot run here (ask ``engine.available()``);
    only a failed import makes this raise.

    Parameters
    ----------
    name : str
        ``"reference"``, ``"cpu"``, ``"gpu"`` or a name given to
        :func:`register_engine`.

    Returns
    -------
    Engine

    Raises
    ------
    BackendUnavailableError
        If the name is unknown or the engine's module cannot be imported
        (the message says what it needs and why the import failed).
    """
    if name in _INSTANCES:
        return _INSTANCES[name]
    if name not in _REGISTRY:
        raise _unknown(name)
    module, cls, _ = _REGISTRY[name]
    try:
        engine_cls = getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError) as exc:
        raise BackendUnavailableError(
            _needs_message(name, f"{type(exc).__name__}: {exc}")) from exc
    engine = engine_cls()
    _INSTANCES[name] = engine
    return engine


def _probe(name: str) -> tuple[bool, str]:
    try:
        engine = get_engine(name)
    except BackendUnavailableError as exc:
        return False, str(exc)
    try:
        ok, reason = engine.available()
    except Exception as exc:  # a broken driver must not break `warpmatch info`
        ok, reason = False, f"{type(exc).__name__}: {exc}"
    return bool(ok), "" if ok else _needs_message(name, reason)


def available_backends() -> dict[str, tuple[bool, str]]:
    """Whether each registered backend can run here.

    Returns
    -------
    dict
        ``{name: (True, "")}`` or ``{name: (False, reason)}``, in registration
        order.
    """
    return {name: _probe(name) for name in _REGISTRY}


def resolve_backend(name: str = "auto") -> Engine:
    """The engine to run for the user's ``backend=`` choice.

    Parameters
    ----------
    name : str, optional
        ``"auto"`` (the default: gpu if it can run, else cpu, else
        reference) or a registered backend name.

    Returns
    -------
    Engine
        An engine whose ``available()`` is true.

    Raises
    ------
    BackendUnavailableError
        If an explicitly named backend cannot run here, e.g. ``backend 'gpu'
        needs CuPy and a CUDA device: <reason>``, or the name is unknown.
    """
    if name == "auto":
        reasons = []
        for cand in AUTO_PREFERENCE:
            if cand not in _REGISTRY:
                continue
            ok, reason = _probe(cand)
            if ok:
                return get_engine(cand)
            reasons.append(reason)
        raise BackendUnavailableError("no backend can run here: " + "; ".join(reasons))
    if name not in _REGISTRY:
        raise _unknown(name)
    ok, reason = _probe(name)
    if not ok:
        raise BackendUnavailableError(reason)
    return get_engine(name)


__all__ = ["Engine", "Progress", "Stop", "get_engine", "resolve_backend",
           "available_backends", "register_engine", "backend_names", "AUTO_PREFERENCE"]
