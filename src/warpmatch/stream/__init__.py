"""Continuous subgraph matching: keep a query's matches up to date while the graph changes.

Layers inside this package (lower never imports higher): ``types`` (the flat
data that flows between the parts) < ``updates`` (readers, writers, stream
generator) < ``dynamic`` (the mutable graph store and per-batch multi-version
views) < ``delta`` (incremental join plans) < ``cpu`` / ``gpu`` (delta
engines) < ``matcher`` (:class:`ContinuousMatcher`, the user's entry point).
"""
from __future__ import annotations

from .types import BatchView, DeltaPlans, InternalBatch, RawDelta, Updates

__all__ = ["BatchView", "DeltaPlans", "InternalBatch", "RawDelta", "Updates"]
