"""The interface every engine implements, and how engines are registered.

An engine executes a :class:`~warpmatch.plan.Plan` on a
:class:`~warpmatch.graph.Graph`. It trusts its inputs (validation happened at
the API boundary and in the planner) and never branches on the query: only on
the plan's arrays.
"""
from __future__ import annotations

from typing import Callable, Iterator, Protocol

import numpy as np

from ..graph.csr import Graph
from ..plan.plan import Plan

#: progress callback: called with (work done, work total) from time to time; the
#: unit is the engine's own (roots, weighted work items, pool rows): only the
#: ratio means something to the caller
Progress = Callable[[int, int], None]
#: early stop: called with the raw count so far between chunks of work; True ends
#: the count, which then returns that (partial) count
Stop = Callable[[int], bool]


class Engine(Protocol):
    """What :mod:`warpmatch.engine` needs from an engine."""

    name: str

    def available(self) -> tuple[bool, str]:
        """(True, "") if the engine can run here, else (False, reason)."""
        ...

    def count(self, graph: Graph, plan: Plan, progress: Progress | None = None,
              stop: Stop | None = None) -> int:
        """Number of raw matches of ``plan`` (NOT multiplied by ``plan.multiplier``).

        Long counts return to Python at least every second or so (between
        kernel calls or launches), so that signals are handled, ``progress``
        moves, and ``stop`` is asked; an engine may ignore ``stop`` only if it
        cannot stop early (the count is then complete).
        """
        ...

    def match(self, graph: Graph, plan: Plan, batch_size: int = 1 << 16,
              limit: int | None = None,
              progress: Progress | None = None) -> Iterator[np.ndarray]:
        """Yield raw matches as (rows × k) arrays in *depth* order, internal ids.

        Each batch has at most ``batch_size`` rows; at most ``limit`` rows in
        all (``None``: no limit). Memory stays bounded by the batch size.
        """
        ...
