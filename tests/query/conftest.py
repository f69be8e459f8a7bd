"""Shared fixtures for the query tests: where the real data lives."""
from __future__ import annotations

import os
from pathlib import Path

import pytest


def data_root() -> Path:
    """``REPO/../shared/data``, or ``$WARPMATCH_DATA`` if set."""
    env = os.environ.get("WARPMATCH_DATA")
    if env:
        return Path(env)
    return (Path(__file__).resolve().parents[2] / ".." / "shared" / "data").resolve()


@pytest.fixture
def data_dir() -> Path:
    root = data_root()
    if not root.is_dir():
        pytest.skip(f"real data not found at {root} (set WARPMATCH_DATA)")
    return root
