"""Shared pytest fixtures and hooks for the warpmatch test suite.

Two things live here, and nothing heavy is imported at collection time:

- Locating the real data sets (``REPO/../shared/data``, overridable with the
  ``WARPMATCH_DATA`` environment variable). Tests that need them take the
  ``data_dir`` fixture (or call :func:`data_file`) and are *skipped with the
  path in the reason* when the data is absent, so a bare clone still passes.
- The ``gpu`` marker (registered in ``pyproject.toml``): tests marked
  ``@pytest.mark.gpu``, and every test under ``tests/gpu/``, are skipped with
  the reason printed when CuPy cannot be imported or no CUDA device is
  visible. CuPy is probed at most once per session, and only if such a test
  was collected (numpy/SciPy convention: hardware needs are markers, not
  ``if`` statements inside tests).

The GPU engine runs its plan-specialised modules throughout the suite
(``WARPMATCH_GPU_COMPILE=specialised``): the generic module and
``compile="auto"`` have their own tests (``tests/gpu/test_gpu_generic.py``),
which ask for them by name.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

os.environ.setdefault("WARPMATCH_GPU_COMPILE", "specialised")

#: The repository root (this file is ``REPO/tests/conftest.py``).
REPO = Path(__file__).resolve().parents[1]


def data_root() -> Path:
    """Where the shared real data sets are expected.

    Returns
    -------
    pathlib.Path
        ``$WARPMATCH_DATA`` if that variable is set and non-empty, else
        ``REPO/../shared/data`` (resolved). The path may not exist.
    """
    env = os.environ.get("WARPMATCH_DATA", "").strip()
    if env:
        return Path(env).expanduser().resolve()
    return (REPO / ".." / "shared" / "data").resolve()


#: The data directory as seen at import time (tests should prefer the fixture).
DATA_DIR = data_root()


def data_file(*parts: str) -> Path:
    """Path of a file inside the shared data, skipping the calling test if absent.

    Parameters
    ----------
    *parts : str
        Path components below the data root, e.g. ``("snap", "wiki-Vote.txt")``.

    Returns
    -------
    pathlib.Path
        The existing file or directory.
    """
    root = data_root()
    path = root.joinpath(*parts)
    if not root.is_dir():
        pytest.skip(f"shared data not found at {root} (set WARPMATCH_DATA to its location)")
    if not path.exists():
        pytest.skip(f"shared data not found at {path}")
    return path


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared real-data directory; the test is skipped if it does not exist."""
    root = data_root()
    if not root.is_dir():
        pytest.skip(f"shared data not found at {root} (set WARPMATCH_DATA to its location)")
    return root


@pytest.fixture(scope="session")
def data_path():
    """The :func:`data_file` helper as a fixture: ``data_path("snap", "wiki-Vote.txt")``."""
    return data_file


@functools.lru_cache(maxsize=1)
def gpu_unavailable_reason() -> str | None:
    """Why GPU tests cannot run here, or ``None`` if CuPy sees a CUDA device.

    Returns
    -------
    str or None
        A human-readable reason (shown in the skip message), or ``None``.
    """
    try:
        import cupy  # noqa: F401  (imported lazily: only when a gpu test is collected)
    except Exception as exc:  # ImportError, or a broken CUDA install raising on import
        return f"CuPy is not importable ({type(exc).__name__}: {exc})"
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # cudaErrorNoDevice, driver missing, ...
        return f"no CUDA device visible ({type(exc).__name__}: {exc})"
    if count == 0:
        return "no CUDA device visible (getDeviceCount() == 0)"
    return None


_GPU_DIR = REPO / "tests" / "gpu"


def _is_gpu_test(item: pytest.Item) -> bool:
    if item.get_closest_marker("gpu") is not None:
        return True
    try:
        return Path(str(item.path)).resolve().is_relative_to(_GPU_DIR)
    except (OSError, ValueError):
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test under ``tests/gpu/`` as ``gpu`` and skip gpu tests without a device."""
    gpu_items = [item for item in items if _is_gpu_test(item)]
    if not gpu_items:
        return
    reason = gpu_unavailable_reason()
    for item in gpu_items:
        if item.get_closest_marker("gpu") is None:
            item.add_marker(pytest.mark.gpu)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"gpu test skipped: {reason}"))


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say at the top of the run where the real data was looked for."""
    root = data_root()
    state = "found" if root.is_dir() else "NOT found: real-data tests will be skipped"
    return [f"warpmatch shared data: {root} ({state})"]


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text) -> path of a new file in tmp_path."""
    def _write(name: str, text: str | bytes) -> Path:
        p = tmp_path / name
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text)
        return p
    return _write
