"""An edge-labeled stream on a G0 without edges (issue 16).

A t/v/e file without ``e`` lines is read as edge-labeled (an empty label
array), so an edge-labeled query and an edge-labeled update stream can start
from it; before, it was read as unlabeled and both were rejected ("the graph
has no edge labels"). The property must survive the ways a G0 is written:
``stream-gen --initial`` (``.graph``/``.wmg``), ``write_graph``, the snapshot.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import warpmatch as wm
from warpmatch.errors import QueryError, UnknownLabelWarning
from warpmatch.stream.matcher import ContinuousMatcher
from warpmatch.stream.updates import make_stream, replay_temporal

Q = "a-[3]-b, b-c"
QD = "a-[3]->b, b->c"
# inserts with labels 3 and 5, a delete and a re-insert with the other label, a new
# vertex (declared: the graph is vertex-labeled), a vertex emptied and refilled
STREAM = [(0, 1, "+", 3), (1, 2, "+", 5), (0, 2, "+", 3), (2, 3, "+", 3), (0, 1, "-", 3),
          ("v", 9, 0), (9, 2, "+", 3), (0, 1, "+", 5), (0, 2, "-", 3), (0, 1, "-", 5),
          (0, 3, "+", 3), (1, 9, "+", 3), (2, 3, "-", 3), (3, 1, "+", 3)]


def recount(cm: ContinuousMatcher) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownLabelWarning)
        return wm.count(cm.graph.snapshot(), cm.query, mode=cm.mode, backend="reference")


def updates_of(items: list) -> list:
    """The tuples as ``as_updates`` takes them: (u, v, op, label) and ("v", id, label)."""
    return [tuple(x) for x in items]


@pytest.mark.parametrize("directed", [False, True])
def test_labeled_stream_on_edgeless_tve_g0(tmp_path: Path, directed: bool) -> None:
    p = tmp_path / "g0.graph"
    p.write_text("t 4 0\nv 0 0\nv 1 0\nv 2 0\nv 3 0\n")
    g0 = wm.read_graph(p, directed=directed)
    assert g0.edge_labels is not None and g0.num_edges == 0
    q = QD if directed else Q
    cm = ContinuousMatcher(g0, q, backend="cpu")
    assert cm.graph.has_edge_labels and cm.count == 0
    whole = ContinuousMatcher(g0, q, backend="cpu").apply(updates_of(STREAM))
    prev, plus, minus = 0, [], []
    for d in cm.apply_batches(updates_of(STREAM), 1):
        now = recount(cm)
        assert d.net == now - prev and cm.count == now
        plus += d.plus_counts.tolist()
        minus += d.minus_counts.tolist()
        prev = now
    assert plus == whole.plus_counts.tolist() and minus == whole.minus_counts.tolist()
    assert sum(plus) > 0 and sum(minus) > 0
    assert cm.graph.edge_label(*cm.graph.to_internal([3, 1] if directed else [1, 3])) == 3
    # the snapshot stays edge-labeled, with or without edges
    assert cm.graph.snapshot().edge_labels is not None
    # an unlabeled query and an unlabeled stream work on it as on any graph (label 0)
    cu = ContinuousMatcher(p, "triangle", backend="cpu")
    d = cu.apply([(0, 1, "+"), (1, 2, "+"), (0, 2, "+")])
    assert d.plus_counts.tolist() == [0, 0, 6] and recount(cu) == 6


def test_unlabeled_tve_g0_still_rejects_edge_labels(tmp_path: Path) -> None:
    p = tmp_path / "g0.graph"
    p.write_text("t 3 1\nv 0 0\nv 1 0\nv 2 0\ne 0 1\n")
    with pytest.raises(QueryError, match="no edge labels"):
        ContinuousMatcher(p, Q, backend="cpu")
    cm = ContinuousMatcher(p, "a-b, b-c", backend="cpu")
    with pytest.raises(wm.errors.InputFormatError, match="no edge labels"):
        cm.apply([(1, 2, "+", 3)])


@pytest.mark.parametrize("ext", ["graph", "wmg"])
def test_make_stream_g0_without_edges_stays_edge_labeled(tmp_path: Path, ext: str) -> None:
    # stream-gen --insert-fraction 1: G0 has no edges; written and read back, it takes
    # the labeled stream that rebuilds the source graph
    src = wm.Graph.from_edges([0, 1, 2, 2, 3], [1, 2, 0, 3, 0], vertex_labels=[0, 0, 1, 0],
                              edge_labels=[3, 5, 3, 3, 3], ids=[10, 20, 30, 40], name="src")
    g0, ups = make_stream(src, insert_fraction=1.0, delete_fraction=0.0, seed=3)
    assert g0.num_edges == 0 and g0.edge_labels is not None and ups.label is not None
    wm.write_graph(g0, tmp_path / f"g0.{ext}")
    back = wm.read_graph(tmp_path / f"g0.{ext}")
    assert back.edge_labels is not None and back.num_edges == 0
    cm = ContinuousMatcher(back, Q, backend="cpu")
    cm.apply(ups)
    assert cm.count == wm.count(src, Q, backend="cpu") == recount(cm) > 0


def test_temporal_g0_through_tve_counts_as_through_wmg(tmp_path: Path) -> None:
    # replay_temporal reads 'src dst time': its G0 and stream have no edge labels. As
    # t/v/e (no 'e' lines) G0 comes back edge-labeled; the unlabeled stream then gets
    # label 0 and unlabeled queries count exactly as on the .wmg copy
    log = tmp_path / "log.txt"
    rng = np.random.default_rng(4)
    t, lines = 1000, []
    for _ in range(300):
        t += int(rng.integers(0, 4))
        a, b = rng.integers(0, 15, 2)
        if a != b:
            lines.append(f"{a} {b} {t}")
    log.write_text("\n".join(lines) + "\n")
    g0, ups = replay_temporal(log, window=40)
    assert g0.edge_labels is None and ups.label is None and (ups.op < 0).any()
    got = {}
    for ext in ("wmg", "graph"):
        wm.write_graph(g0, tmp_path / f"g0.{ext}")
        cm = ContinuousMatcher(tmp_path / f"g0.{ext}", "triangle", backend="cpu")
        got[ext] = [(d.plus_counts.tolist(), d.minus_counts.tolist())
                    for d in cm.apply_batches(ups, 50, counts_only=True)]
        assert cm.count == recount(cm)
    assert wm.read_graph(tmp_path / "g0.graph").edge_labels is not None
    assert got["wmg"] == got["graph"]
