"""The ``warpmatch`` command line (click).

Map: :mod:`._common` (the group, one-line error handling, shared options and
helpers) < one module per command group, each a thin layer over
:mod:`warpmatch.api` and the readers/generators in :mod:`warpmatch.graph`:

- :mod:`.search`: ``count``, ``match``, ``explain``;
- :mod:`.partition`: ``partition`` (and the search commands' ``--partitions``);
- :mod:`.graphs`: ``info``, ``convert``, ``generate``, ``patterns``;
- :mod:`.queries`: ``sample-queries``;
- :mod:`.demo`: ``demo``;
- :mod:`.stream`: ``stream``, ``stream-gen``;
- :mod:`.show`: ``show``, ``plot-stream`` (pictures, over :mod:`warpmatch.viz`).

Each command parses options, calls the library, prints a result that says its
semantics (``triangle: 1,234 embeddings (non-induced)``) and, with ``--json``,
one JSON object as the last line of stdout. A new command goes in the module of
its group (or a new module imported below), registered on :data:`cli`.
"""
from __future__ import annotations

from . import demo, graphs, partition, queries, search, show, stream  # noqa: F401  (register)
from ._common import cli, main, parse_anchors, read_id_file

__all__ = ["cli", "main", "parse_anchors", "read_id_file"]
