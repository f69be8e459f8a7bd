"""Ctrl-C and SIGTERM stop a GPU ``count`` and ``match`` within seconds (issue 22, point 3).

The GPU engine launches its kernel on slices of the task pool sized to about a
quarter of a second (``engine/gpu/run.py``), so signals are served between
launches. Real signals to real ``python -m warpmatch`` processes, as in
``tests/test_cli_interrupt.py`` (whose helpers these reuse): wait until the
search runs (the progress bar on a pseudo-terminal; the partial file of
``match``), send the signal, check the exit status, the time to exit, the one
line on stderr and that no file is left.

The graph and pattern are chosen to run for minutes on an H100 (6-cycles of an
RMAT graph of 2**17 vertices), so that the signal always lands mid-search.
"""
from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

pytest.importorskip("cupy", reason="the GPU engine needs CuPy")
pytestmark = pytest.mark.gpu

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_cli_interrupt import count_stops, match_stops  # noqa: E402

from warpmatch.graph import rmat, save_binary  # noqa: E402

PATTERN = "6-cycle"


@pytest.fixture(scope="module")
def gpu_graph(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("gpu_interrupt") / "rmat17.wmg"
    save_binary(rmat(17, seed=0), path)
    return path


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"),
                                             (signal.SIGTERM, 143, "terminated")])
def test_gpu_count_stops(tmp_path, gpu_graph, sig, code, word) -> None:
    count_stops(tmp_path, gpu_graph, PATTERN, "gpu", sig, code, word, settle=1.0)


def test_gpu_match_stops_and_leaves_no_file(tmp_path, gpu_graph) -> None:
    match_stops(tmp_path, gpu_graph, PATTERN, "gpu", signal.SIGTERM, 143, "terminated",
                exact_stderr=False)
