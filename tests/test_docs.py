"""The API reference builds with ``mkdocs build --strict``, so docs/ and the docstrings
cannot rot unseen: a page that names a missing object, a broken cross-reference or a
snippet of a vanished file fails here (CI installs mkdocs with the dev extras).
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_MISSING = [m for m in ("mkdocs", "mkdocstrings", "mkdocstrings_handlers.python", "material")
            if importlib.util.find_spec(m.split(".")[0]) is None]

pytestmark = pytest.mark.skipif(
    bool(_MISSING), reason=f"{', '.join(_MISSING)} not installed: pip install -e '.[docs]' "
                           "(the dev extras include it)")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site (one strict build for the module, about 2 s)."""
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                          "-f", str(REPO / "mkdocs.yml"), "-d", str(out)],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"mkdocs build --strict failed:\n{res.stdout}\n{res.stderr}"
    return out


def page(site: Path, name: str) -> str:
    path = site / name / "index.html" if name else site / "index.html"
    assert path.is_file(), f"{path} was not built"
    return path.read_text(encoding="utf-8")


def test_api_pages_hold_the_docstrings(site: Path) -> None:
    search = page(site, "api/search")
    assert "Count the embeddings (or distinct subgraphs) of a query graph" in search
    assert "List the embeddings (or distinct subgraphs) of a query, in batches" in search
    assert "Per-update deltas of a query's matches over a stream" in page(site, "api/stream")
    assert "Build a graph from parallel arrays of edge endpoints" in page(site, "api/graphs")
    assert "Draw the first matches of a query with their neighbourhood" in page(site, "api/viz")
    assert "WarpmatchError" in page(site, "api/errors")


def test_sphinx_roles_become_links(site: Path) -> None:
    """docs/_hooks.py: ``:func:`warpmatch.read_graph``` renders as a link, not role text."""
    search = page(site, "api/search")
    assert ":func:" not in search and ":class:" not in search
    assert 'href="../graphs/#warpmatch.read_graph"' in search


def test_readme_and_changelog_are_included(site: Path) -> None:
    assert "warpmatch finds every occurrence" in page(site, "")
    changelog = page(site, "changelog")
    assert "Unreleased" in changelog and "ContinuousMatcher" in changelog
