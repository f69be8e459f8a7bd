"""``stream``, ``stream-gen``: continuous matching over an update stream."""
from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator, Sequence

import click

from ._common import (
    CONTEXT_SETTINGS,
    _debug_option,
    _emit_json,
    _graph_line,
    _graph_options,
    _json_option,
    _load_graph,
    _threads_option,
    cli,
    running,
)
from ._cluster import cluster_client, cluster_options
from .graphs import _write_graph_atomic

# -------------------------------------------------------------------- stream
STREAM_BACKENDS = ("auto", "cpu", "gpu")
#: extension -> format of the `stream --output` deltas file
DELTA_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".jsonl": "jsonl",
                 ".ndjson": "jsonl", ".csv": "csv"}


def _delta_format(path: str, fmt: str | None = None) -> str:
    """The deltas file's format: ``fmt``, else by extension; stdout and pipes get JSON lines."""
    from .._writers import is_stdout, special_file
    if fmt:
        return fmt
    ext = Path(path).suffix.lower()
    if ext in DELTA_FORMATS:
        return DELTA_FORMATS[ext]
    if is_stdout(path) or special_file(path):
        return "jsonl"             # one self-describing line per row: what a pipe reader wants
    raise click.BadParameter(f"{path!r}: use a .parquet, .jsonl or .csv file (or "
                             "--output-format)", param_hint="'--output'")


def _delta_columns(query_names: Sequence[str], counts_only: bool,
                   has_time: bool) -> tuple[list[str], list[str]]:
    """(leading columns, data columns) of the deltas file; query names never clash."""
    lead = ["update"] + (["time"] if has_time else [])
    if counts_only:
        return lead, ["plus", "minus", "valid"]
    lead.insert(1, "sign")
    taken = {"update", "sign", "time"}
    return lead, [f"q_{n}" if str(n) in taken else str(n) for n in query_names]


class DeltaWriter:
    """Writes ``warpmatch stream --output`` batch by batch (Parquet, JSON lines or CSV).

    Match rows: ``update`` (global index of the update in the stream),
    ``sign`` (+1 appeared, -1 disappeared), ``time`` (when the stream has
    timestamps), then one column per query vertex (external ids). With
    ``counts_only`` one row per update: ``update``, ``time``, ``plus``,
    ``minus``, ``valid``. The schema is fixed by the first batch (which tells
    whether the stream has timestamps and their type).

    ``path`` is a file the writer opens (a temporary file, a FIFO) or an open
    binary stream (stdout, for CSV and JSON lines), which it flushes after
    every batch, so a reader downstream sees each batch's rows as it is
    matched, and leaves open.
    """

    def __init__(self, path: Path | BinaryIO, fmt: str, query_names: Sequence[str],
                 counts_only: bool) -> None:
        self.path, self.fmt, self.names = path, fmt, list(query_names)
        self.counts_only = counts_only
        self._stream = not isinstance(path, (str, os.PathLike))
        self.rows = 0
        self.columns: list[str] | None = None
        self._w: Any = None
        self._fh: Any = None
        self._time_dtype: Any = None

    def _open(self, time_dtype: Any) -> None:
        import numpy as np
        import pyarrow as pa
        lead, data = _delta_columns(self.names, self.counts_only, time_dtype is not None)
        self.columns = lead + data
        self._time_dtype = time_dtype
        types = {"update": pa.int64(), "sign": pa.int8(), "plus": pa.int64(),
                 "minus": pa.int64(), "valid": pa.bool_()}
        if time_dtype is not None:
            types["time"] = pa.from_numpy_dtype(np.dtype(time_dtype))
        self._schema = pa.schema([(c, types.get(c, pa.int64())) for c in self.columns])
        # a stream (stdout) is written through pyarrow's PythonFile, which leaves it open
        sink = pa.PythonFile(self.path, mode="w") if self._stream else os.fspath(self.path)
        if self.fmt == "parquet":
            import pyarrow.parquet as pq
            self._w = pq.ParquetWriter(sink, self._schema, compression="zstd")
        elif self.fmt == "csv":
            import pyarrow.csv as pcsv
            self._w = pcsv.CSVWriter(sink, self._schema,
                                     write_options=pcsv.WriteOptions(quoting_header="none"))
            self._w.write_table(self._schema.empty_table())   # the header, even for no rows
        else:
            self._fh = self.path if self._stream else open(self.path, "wb")

    def write(self, delta: Any, offset: int, time: Any) -> None:
        """Append the rows of one ``ContinuousMatcher.apply`` result (``offset``: its first
        update's global index; ``time``: the batch's timestamps or ``None``)."""
        import numpy as np
        if self.columns is None:
            self._open(None if time is None else time.dtype)
        if self.counts_only:
            upd = np.arange(len(delta.plus_counts), dtype=np.int64)
            data = [np.asarray(delta.plus_counts, np.int64), np.asarray(delta.minus_counts,
                                                                        np.int64),
                    np.asarray(delta.valid, bool)]
        else:
            plus = np.asarray(delta.plus, np.int64).reshape(-1, len(self.names))
            minus = np.asarray(delta.minus, np.int64).reshape(-1, len(self.names))
            rows = np.concatenate([minus, plus])
            upd = np.concatenate([np.asarray(delta.minus_update, np.int64),
                                  np.asarray(delta.plus_update, np.int64)])
            sign = np.concatenate([np.full(minus.shape[0], -1, np.int8),
                                   np.ones(plus.shape[0], np.int8)])
            # by update, and within one update the matches that disappear first
            order = np.argsort(upd, kind="stable")
            rows, upd, sign = rows[order], upd[order], sign[order]
            data = [rows[:, j] for j in range(rows.shape[1])]
        cols = [upd + offset] + ([] if self.counts_only else [sign])
        if self._time_dtype is not None:
            if time is None:
                raise click.ClickException("the update stream stopped carrying timestamps")
            t = np.asarray(time)[upd]
            if t.dtype != self._time_dtype:
                if np.dtype(self._time_dtype).kind == "i" and np.any(t != np.floor(t)):
                    raise click.ClickException("decimal timestamps after integer ones")
                t = t.astype(self._time_dtype)
            cols.append(t)
        cols += data
        if not upd.size:
            return
        self.rows += int(upd.size)
        if self._fh is not None:
            self._fh.write(_jsonl(self.columns, cols))
        else:
            import pyarrow as pa
            table = pa.Table.from_arrays([pa.array(np.ascontiguousarray(c)) for c in cols],
                                         schema=self._schema)
            self._w.write_table(table)
        if self._stream:
            self.path.flush()  # type: ignore[union-attr]

    def close(self) -> None:
        """Finish the file (Parquet footer); a stream without batches gets an empty table."""
        if self.columns is None:
            self._open(None)
        if self._w is not None:
            self._w.close()
            self._w = None
        if self._fh is not None:
            if not self._stream:      # stdout is not ours to close
                self._fh.close()
            self._fh = None
        if self._stream:
            self.path.flush()  # type: ignore[union-attr]


def _jsonl(names: Sequence[str], cols: Sequence[Any], chunk: int = 1 << 20) -> bytes:
    """JSON lines of parallel numeric/bool columns, joined column-wise by pyarrow.

    Every row is ``{"name": value, ...}``; pyarrow's number-to-string casts give
    valid JSON numbers (``3``, ``1.5``, ``2e+20``) and ``true``/``false``. Rows
    go in chunks so a string array never nears its 2 GiB offset limit.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    keys = [("{" if j == 0 else ",") + json.dumps(str(n)) + ":" for j, n in enumerate(names)]
    n_rows = len(cols[0]) if cols else 0
    out = []
    for lo in range(0, n_rows, chunk):
        parts: list[Any] = []
        for key, col in zip(keys, cols):
            parts += [key, pc.cast(pa.array(np.asarray(col)[lo:lo + chunk]), pa.string())]
        line = pc.binary_join_element_wise(*parts, "}\n", "")
        offs = np.frombuffer(line.buffers()[1], np.int32)[line.offset:line.offset + len(line) + 1]
        out.append(line.buffers()[2].to_pybytes()[offs[0]:offs[-1]])
    return b"".join(out)


def _stream_options(f: Callable) -> Callable:
    f = click.option("--backend", type=click.Choice(STREAM_BACKENDS), default="auto",
                     show_default=True,
                     help="Engine: auto picks the GPU if CuPy and a device exist, else "
                          "cpu (and cpu for a query whose labels confine it to part of a "
                          "labeled graph, where it was measured faster).")(f)
    f = click.option("--induced", is_flag=True,
                     help="Induced: non-adjacent query vertices map to non-adjacent data "
                          "vertices (an insertion can then also remove matches).")(f)
    f = click.option("--mode", type=click.Choice(["embeddings", "subgraphs"]),
                     default="embeddings", show_default=True,
                     help="embeddings: every injective map; subgraphs: each distinct "
                          "subgraph once.")(f)
    return f


@cli.command("stream", context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@click.argument("query")
@click.argument("updates")
@click.option("--batch-size", type=click.IntRange(min=1), default=1024, show_default=True,
              help="Updates matched together (in parallel); results do not depend on it.")
@click.option("--max-latency", default=None, metavar="DURATION",
              help="With UPDATES from stdin ('-'): a batch also closes when its oldest update "
                   "has waited this long (e.g. 1ms, 250us, 0.5s), so a slow producer's "
                   "updates are matched without waiting for --batch-size of them; 0: a batch "
                   "is whatever arrived while the previous one was matched.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Deltas file (.parquet, .jsonl or .csv): one row per match that appears "
                   "(sign +1) or disappears (sign -1), with the update's index and time; "
                   "with --counts-only one row per update. '-' streams JSON lines (or CSV) "
                   "to stdout batch by batch (the summary then goes to stderr); symlinks are "
                   "written through, a FIFO is written into directly.")
@click.option("--output-format", type=click.Choice(["parquet", "jsonl", "csv"]), default=None,
              help="Override the format implied by --output's extension.")
@click.option("--counts-only", is_flag=True,
              help="Compute per-update counts only, never the matches themselves.")
@click.option("--on-invalid", type=click.Choice(["error", "skip"]), default="error",
              show_default=True,
              help="An update inserting an existing edge, deleting a missing one or making "
                   "a self-loop: stop with an error naming its line, or skip it (counted; "
                   "the first one skipped is named on stderr).")
@click.option("--keep", type=click.Choice(["all", "relevant"]), default="all", show_default=True,
              help="'relevant': keep only the edges a fully labelled QUERY can read (as "
                   "RapidFlow does); updates of other edges are taken as valid without a "
                   "look and cost almost nothing. 'all' keeps and checks the whole graph.")
@click.option("--update-labels/--no-update-labels", "update_labels", default=None,
              help="Text UPDATES: the 4th field is an edge label / there is no label field "
                   "(a 4th field is the timestamp). Default: a '# columns:' header "
                   "decides, else a 4th field is a label and a 5th a timestamp.")
@click.option("--updates-format", type=click.Choice(["text", "parquet", "csv"]), default=None,
              help="Format of UPDATES (default: from the extension; stdin: Parquet if it "
                   "starts with its magic bytes, else text).")
@_threads_option
@cluster_options
@_stream_options
@_graph_options
@_json_option
@_debug_option
def stream(graph: str, query: str, updates: str, batch_size: int, max_latency: str | None,
           output: str | None,
           output_format: str | None, counts_only: bool, on_invalid: str, keep: str,
           update_labels: bool | None, updates_format: str | None, threads: int | None,
           workers: int | None, scheduler: str | None, mode: str, induced: bool,
           backend: str, fmt: str | None, directed: bool, vertex_labels: str | None,
           as_json: bool) -> None:
    """Keep the matches of QUERY in GRAPH up to date while UPDATES change it.

    UPDATES holds one edge update per line, in GRAPH's vertex id space:
    "u v +" inserts, "u v -" deletes (also 1/-1, insert/delete), optionally
    followed by an edge label and a timestamp; "v ID LABEL" declares a new
    vertex of a labeled graph; '#' comments. Parquet/CSV tables with columns
    src, dst, op[, label][, time] work too. "-" reads stdin as it arrives,
    so a producer can pipe updates in.

    Updates apply one by one in arrival order: for each, the matches that
    appear (+) and disappear (-) are found incrementally, never by
    recounting. The summary gives the count before and after the stream
    and the totals added and removed: before + added - removed = after.

    \b
    Examples:
      warpmatch stream web.txt triangle updates.txt
      warpmatch stream web.txt "a-b, b-c, c-d, d-a" updates.parquet -o deltas.parquet
      warpmatch stream web.txt triangle updates.txt -o - | consumer   (JSON lines on stdout)
      producer | warpmatch stream g0.wmg triangle - --counts-only --json
      producer | warpmatch stream g0.wmg triangle - -o - --max-latency 1ms
      warpmatch stream-gen web.txt --out ups.txt --initial g0.wmg   (make a test stream)
      warpmatch stream-gen CollegeMsg.txt --temporal --out msg.txt --initial g0.wmg
      warpmatch stream g0.wmg triangle msg.txt      (replay a 'src dst time' log)
      warpmatch stream g0.wmg square ups.txt --workers 4   (replicas on a Dask cluster)

    With --workers or --scheduler every Dask worker keeps a replica of the
    graph, applies every batch and finds the deltas of its share of the
    batch's updates; the results are the same.
    """
    import numpy as np

    from .._progress import ProgressBar
    from ..api import ContinuousMatcher, as_query, describe_count
    from ..stream.collector import Collector
    from ..stream.updates import iter_update_batches, read_updates, split_batches
    from ._output import check_output_target, output_sink

    if output_format and output is None:
        raise click.UsageError("--output-format applies to --output only")
    ofmt = _delta_format(output, output_format) if output else None
    # stdout carries the rows: the summary goes to stderr
    to_stdout = output is not None and check_output_target(output, ofmt, as_json)
    g, load_s = _load_graph(graph, fmt, directed, vertex_labels)
    q = as_query(query, g)
    ups = None
    due: list[Any] = []                         # each stdin batch's arrival times
    if updates == "-":
        total = None
        latency = None
        if max_latency is not None:
            from ..stream.batching import parse_duration
            try:
                latency = parse_duration(max_latency)
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="--max-latency") from None
        batches = iter_update_batches("-", batch_size, labels=update_labels, fmt=updates_format,
                                      max_latency=latency, arrivals=due.append)
    else:
        if max_latency is not None:
            raise click.UsageError("--max-latency applies to UPDATES read from stdin ('-'); a "
                                   "file is read whole, so its batches are full anyway")
        ups = read_updates(updates, labels=update_labels, fmt=updates_format)
        total = len(ups)
        batches = split_batches(ups, batch_size)
    ctx = click.get_current_context()
    ctx.with_resource(running(threads))           # until the command ends
    client = ctx.with_resource(cluster_client(workers, scheduler))
    t0 = time.perf_counter()
    with ProgressBar(f"{q.name} (initial count)", percent=True) as init_bar:
        cm = ContinuousMatcher(g, q, mode=mode, induced=induced, backend=backend,
                               on_invalid=on_invalid, keep=keep,
                               progress=init_bar if init_bar.enabled else None,
                               **({} if client is None else {"client": client}))
    if client is not None:
        ctx.call_on_close(cm.close)
    initial = int(cm.initial_count)
    init_s = time.perf_counter() - t0
    want_rows = output is not None and not counts_only
    lat = cm.latency                            # (the matcher's own: what Python reads)
    n_upd = added = removed = invalid = ins = dels = nbatch = 0
    has_time = False
    first_skipped = ""                         # where and why, for the warning at the end
    t1 = time.perf_counter()
    collect = None
    with contextlib.ExitStack() as stack:
        writer = None
        if output is not None:
            assert ofmt is not None
            sink = stack.enter_context(output_sink(output))
            writer = DeltaWriter(sink, ofmt, q.names, counts_only)
            stack.callback(writer.close)       # before the rename (or the cleanup)
            # DCSM's collector: batch k's rows are written while batch k+1 is matched
            # (every write done before writer.close: the stack unwinds in reverse);
            # WARPMATCH_STREAM_COLLECTOR=0 writes in this loop (bench/collector_ab.py)
            one_thread = os.environ.get("WARPMATCH_STREAM_COLLECTOR", "1").strip() == "0"
            collect = stack.enter_context(Collector(writer.write, 0 if one_thread else 1))
        bar = stack.enter_context(ProgressBar(q.name, unit="updates", total=total))
        pairs = _timed_pairs(cm, ups, batches, batch_size, not want_rows, due, lat)
        for batch, delta in pairs:
            if collect is not None:
                collect.put(delta, n_upd, batch.time)
            valid = delta.valid
            n_upd += len(batch)
            nbatch += 1
            added += int(delta.added)
            removed += int(delta.removed)
            if not first_skipped and not valid.all():
                i = int(np.flatnonzero(~valid)[0])
                first_skipped = f"{batch.where(i)}: {delta.reasons[i]}"
            invalid += int(valid.size - valid.sum())
            ins += int(((batch.op > 0) & valid).sum())
            dels += int(((batch.op < 0) & valid).sum())
            has_time = has_time or batch.time is not None
            bar.update(len(batch))
    seconds = time.perf_counter() - t1
    if invalid:
        # --on-invalid skip: say which, so a skipped update is never a silent one
        click.echo(f"warpmatch: warning: skipped {invalid:,} invalid update"
                   f"{'' if invalid == 1 else 's'} (they change nothing); the first: "
                   f"{first_skipped}", err=True)
    final = int(cm.count)
    backend_name = str(cm.backend)
    rate = n_upd / seconds if seconds > 0 else float("inf")
    click.echo(f"{describe_count(initial, mode, induced, q.name)} before the stream, "
               f"{final:,} after {n_upd:,} updates", err=to_stdout)
    click.echo(f"  matches: +{added:,} appeared, -{removed:,} disappeared "
               f"({initial:,} + {added:,} - {removed:,} = {initial + added - removed:,})",
               err=to_stdout)
    click.echo(f"  updates: {ins:,} insertions, {dels:,} deletions"
               + (f", {invalid:,} invalid skipped" if invalid else "")
               + f"; {seconds:.3f} s, {rate:,.0f} updates/s (batch size {batch_size:,}, "
                 f"{nbatch:,} batch{'' if nbatch == 1 else 'es'})", err=to_stdout)
    if updates == "-" and n_upd:
        click.echo(f"  {lat.line()} (from each update's arrival)", err=to_stdout)
    paths = getattr(cm, "paths", None)
    routed = ("" if not paths else f" (counting batches: {paths['sequential']:,} on the host's "
              f"sequential path, {paths['device']:,} on the device)")
    click.echo(f"  in {_graph_line(g)}; backend {backend_name}{routed}; set-up and initial "
               f"count {init_s:.3f} s", err=to_stdout)
    if writer is not None:
        assert writer.columns is not None
        what = "per-update counts" if counts_only else "delta matches"
        click.echo(f"  {writer.rows:,} rows of {what} written to "
                   f"{'stdout' if output == '-' else output} "
                   f"(columns {', '.join(writer.columns)})", err=to_stdout)
    if as_json:
        _emit_json({
            "initial_count": initial, "final_count": final, "added": added,
            "removed": removed, "updates": n_upd, "seconds": round(seconds, 6),
            "mode": mode, "induced": induced, "backend": backend_name, "invalid": invalid,
            "insertions": ins, "deletions": dels, "batch_size": batch_size,
            "batches": nbatch, "updates_per_second": round(rate, 3) if n_upd else 0.0,
            "initial_seconds": round(init_s, 6), "load_seconds": round(load_s, 6),
            "graph": graph, "graph_name": g.name, "query": q.name, "query_dsl": q.to_dsl(),
            "updates_source": updates, "timestamps": has_time, "on_invalid": on_invalid,
            "keep": keep, "paths": paths,
            "max_latency_seconds": None if updates != "-" else latency,
            # seconds per update from its arrival (stdin: when its chunk was read; a file:
            # when the stream began) to its batch's start (response) and deltas (latency)
            "latency": {**lat.summary(), "arrival": "read" if updates == "-" else "start"},
            "output": output, "format": ofmt,
            "rows": None if writer is None else writer.rows,
            # the writer thread's time, and how long matching waited for it
            "output_seconds": None if collect is None else round(collect.write_seconds, 6),
            "output_wait_seconds": (None if collect is None
                                    else round(collect.waited_seconds, 6)),
            "columns": None if writer is None else writer.columns,
            "semantics": describe_count(final, mode, induced, q.name),
            **({"distributed": cm.stats} if client is not None else {}),
        })


def _timed_pairs(cm: Any, ups: Any, batches: Iterator[Any], batch_size: int,
                 counts_only: bool, due: list, lat: Any) -> Iterator[tuple[Any, Any]]:
    """``(batch, delta)`` of the stream in order, each batch's times counted in ``lat``.

    A file's stream is known whole: ``apply_batches`` may count several of its batches
    in one run (the CPU engine's sequential path), each still yielded with its own
    delta; its updates all arrived when the stream began. From stdin each batch is
    applied as soon as it is read, and ``due`` holds its arrival times (the reader's)."""
    if ups is not None:
        deltas = cm.apply_batches(ups, batch_size, counts_only=counts_only)
        began = time.perf_counter()

        def timed() -> Iterator[Any]:
            while True:
                started = time.perf_counter()
                delta = next(deltas, None)
                if delta is None:
                    return
                lat.record_uniform(began, len(delta), started, time.perf_counter())
                yield delta
        yield from zip(batches, timed())
        return
    for batch in batches:
        yield batch, lat.timed(lambda b: cm.apply(b, counts_only=counts_only), batch, due.pop())


@cli.command("stream-gen", context_settings=CONTEXT_SETTINGS)
@click.argument("graph")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False),
              help="The update stream to write (.txt text, .parquet or .csv).")
@click.option("--initial", "initial", required=True, type=click.Path(dir_okay=False),
              help="The initial graph G0 to write (.wmg recommended: it keeps isolated "
                   "vertices, labels and ids).")
@click.option("--insert-fraction", type=click.FloatRange(0, 1), default=0.1, show_default=True,
              help="Fraction of GRAPH's edges removed from G0 and inserted by the stream.")
@click.option("--delete-fraction", type=click.FloatRange(0, 1), default=0.05,
              show_default=True,
              help="Fraction of GRAPH's edges (of those in G0) deleted by the stream.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@click.option("--temporal", is_flag=True,
              help="GRAPH is a timestamped message log ('src dst time' lines, e.g. SNAP "
                   "CollegeMsg): replay it in time order; G0 has its vertices, no edges.")
@click.option("--window", type=click.FloatRange(min=0, min_open=True), default=None,
              help="With --temporal: an edge expires this long (in the log's time unit) "
                   "after its last message.")
@_graph_options
@_json_option
@_debug_option
def stream_gen(graph: str, out: str, initial: str, insert_fraction: float,
               delete_fraction: float, seed: int, temporal: bool, window: float | None,
               fmt: str | None, directed: bool, vertex_labels: str | None,
               as_json: bool) -> None:
    """Make an update stream from GRAPH: write the initial graph and the updates.

    By default follows the continuous-matching papers (GCSM, RapidFlow): a
    random --insert-fraction of the edges is left out of the initial graph
    and inserted by the stream, a random --delete-fraction of the remaining
    edges is deleted, the two shuffled together (seeded). With --temporal,
    GRAPH is a message log whose edges appear with their first message (and
    expire after --window).

    \b
    Examples:
      warpmatch stream-gen web.txt --out ups.txt --initial g0.wmg --seed 1
      warpmatch stream-gen CollegeMsg.txt --temporal --window 604800 --out msg.txt --initial g0.wmg
      warpmatch stream g0.wmg triangle ups.txt
    """
    from .._writers import atomic_path
    from ..graph.formats import output_graph_format
    from ..stream.updates import (
        make_stream,
        output_update_format,
        replay_temporal,
        write_updates,
    )

    # decided from the user's names, before the work: a bad name fails at once and names
    # the user's file, and the writers below never guess from a temporary file's name
    ups_fmt = output_update_format(out)
    g0_fmt = output_graph_format(initial)
    if insert_fraction + delete_fraction > 1:
        raise click.BadParameter("--insert-fraction + --delete-fraction must be <= 1",
                                 param_hint="'--delete-fraction'")
    if window is not None and not temporal:
        raise click.UsageError("--window applies to --temporal logs only")
    if temporal and (fmt or vertex_labels):
        raise click.UsageError("--temporal reads a 'src dst time' log; --format and "
                               "--vertex-labels do not apply")
    t0 = time.perf_counter()
    if temporal:
        g0, ups = replay_temporal(graph, window, directed=directed)
        how = f"temporal replay{f', window {window:g}' if window else ''}"
        src_line = f"{graph} ({g0.n:,} vertices, {'directed' if directed else 'undirected'})"
    else:
        g, _ = _load_graph(graph, fmt, directed, vertex_labels)
        g0, ups = make_stream(g, insert_fraction, delete_fraction, seed)
        how = (f"insert fraction {insert_fraction:g}, delete fraction {delete_fraction:g}, "
               f"seed {seed}")
        src_line = _graph_line(g)
    # OUT is renamed into place last: if either write fails, neither file appears
    with atomic_path(out) as tmp_u:
        write_updates(tmp_u, ups, ups_fmt)
        _write_graph_atomic(g0, initial, g0_fmt)
    n_ins = int((ups.op > 0).sum())
    n_del = len(ups) - n_ins
    click.echo(f"wrote {out}: {len(ups):,} updates ({n_ins:,} insertions, {n_del:,} "
               f"deletions; {how})")
    click.echo(f"wrote {initial}: {_graph_line(g0)}")
    click.echo(f"  from {src_line}; {time.perf_counter() - t0:.2f} s")
    if as_json:
        _emit_json({"updates": len(ups), "insertions": n_ins, "deletions": n_del,
                    "out": out, "initial": initial, "initial_vertices": g0.n,
                    "initial_edges": g0.num_edges, "seed": seed, "temporal": temporal,
                    "window": window, "insert_fraction": None if temporal else insert_fraction,
                    "delete_fraction": None if temporal else delete_fraction,
                    "timestamps": ups.time is not None})
