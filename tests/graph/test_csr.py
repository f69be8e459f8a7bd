"""Validation in Graph.from_edges and Graph.to_internal at the edges of the integer ranges."""
from __future__ import annotations

import numpy as np
import pytest

import warpmatch as wm
from warpmatch.errors import GraphError
from warpmatch.graph import Graph

INT32_MAX = 2**31 - 1


@pytest.mark.parametrize("kw,fragment", [
    ({"vertex_labels": [2**32 + 5, 5]}, "vertex_labels holds 4294967301"),
    ({"vertex_labels": np.array([0, INT32_MAX + 1], dtype=np.int64)}, "vertex_labels"),
    ({"edge_labels": np.array([2**40])}, "edge_labels holds 1099511627776"),
])
def test_from_edges_rejects_labels_beyond_int32(kw: dict, fragment: str) -> None:
    # labels are stored as int32; 2**32 + 5 used to wrap silently to 5
    with pytest.raises(GraphError, match=fragment):
        Graph.from_edges([0], [1], **kw)


def test_from_edges_keeps_the_largest_int32_label() -> None:
    g = Graph.from_edges([0], [1], vertex_labels=[INT32_MAX, 0], edge_labels=[INT32_MAX])
    assert g.vertex_labels.tolist() == [INT32_MAX, 0]
    assert g.edge_labels.tolist() == [INT32_MAX, INT32_MAX]


def test_wrapped_label_would_have_matched() -> None:
    """The user-visible symptom: a query for label 5 must not match a label 2**32 + 5."""
    with pytest.raises(GraphError):
        wm.count(Graph.from_edges([0], [1], vertex_labels=[2**32 + 5, 5]), "a:5-b:5")


def test_to_internal_names_ids_beyond_int64() -> None:
    g = Graph.from_edges([0], [1], ids=[5, 2**63 - 1], name="big")
    assert g.to_internal([2**63 - 1]).tolist() == [1]
    for bad in (2**63, 2**70, -2**70):
        with pytest.raises(GraphError, match=f"{bad} is not a vertex of big"):
            g.to_internal([5, bad])


def test_anchor_beyond_int64_is_a_graph_error() -> None:
    g = Graph.from_edges([0, 1, 2], [1, 2, 0])
    with pytest.raises(GraphError, match=str(2**64)):
        wm.count(g, "triangle", anchors={0: [2**64]})
    with pytest.raises(GraphError, match=str(2**64)):
        wm.match(g, "triangle", anchors={0: [1, 2**64]})
