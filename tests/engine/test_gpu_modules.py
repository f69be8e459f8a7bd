"""Which GPU module a search runs (engine/gpu/modules.py), decided without a GPU.

``compile="auto"`` takes the specialised module where it was compiled before (held by
the process, or a marker left by a compile into CuPy's disk cache), else the generic
one; the markers are keyed by the source, the device's architecture and CuPy's cache
folder; background compiles start only when asked for.
"""
from __future__ import annotations

import pytest

from warpmatch.engine.gpu import modules as M


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "cupy"))
    monkeypatch.delenv(M.ENV_BACKGROUND, raising=False)
    return tmp_path


def test_default_mode_from_the_environment(monkeypatch):
    monkeypatch.delenv(M.ENV_MODE, raising=False)
    assert M.default_mode() == "auto"
    monkeypatch.setenv(M.ENV_MODE, " Generic ")
    assert M.default_mode() == "generic"
    monkeypatch.setenv(M.ENV_MODE, "fast")
    with pytest.raises(ValueError, match="WARPMATCH_GPU_COMPILE"):
        M.default_mode()


def test_auto_takes_the_specialised_module_once_compiled(cache):
    src = "// a module source"
    # new structure: generic, and no background compile unless asked for
    assert M.use_generic("auto", True, False, src, "90")
    assert not M._RUNNING
    M.mark_compiled(src, "90")
    assert M.known_compiled(src, "90")
    assert not M.use_generic("auto", True, False, src, "90")
    # another architecture or another source: not compiled
    assert M.use_generic("auto", True, False, src, "80")
    assert M.use_generic("auto", True, False, src + " ", "90")
    # held by the process already
    assert not M.use_generic("auto", True, True, "", "90")


def test_markers_follow_cupys_cache_folder(cache, monkeypatch):
    M.mark_compiled("src", "90")
    assert M.known_compiled("src", "90")
    monkeypatch.setenv("CUPY_CACHE_DIR", str(cache / "elsewhere"))
    assert not M.known_compiled("src", "90")


def test_forced_modes_and_ineligible_plans(cache):
    assert M.use_generic("generic", True, False, "", "90")
    assert not M.use_generic("specialised", True, False, "", "90")
    # a plan the generic module cannot serve (rule 8, too many vertices) never runs on it
    assert not M.use_generic("generic", False, False, "", "90")
    assert not M.use_generic("auto", False, False, "src", "90")


def test_background_compile_only_when_asked(cache, monkeypatch):
    assert not M.compile_in_background("src", "90")
    monkeypatch.setenv(M.ENV_BACKGROUND, "0")
    assert not M.compile_in_background("src", "90")
