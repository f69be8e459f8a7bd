"""RapidFlow as a peer of bench/csm_peers.py: build it (plain and per-update check
variants), write its input files, run it and read its results.

Map: the patch constants and :func:`patch_check_variant` (the one line the check
variant changes, at build time, in a temporary copy) < :func:`build_rapidflow`,
:func:`resolve_peer` (cmake + make into a cache outside the repository) <
``write_rf_*`` (graph, query, stream in RapidFlow's formats) < :func:`run_rapidflow`,
:func:`rapidflow_runs` (one timed run; repeats plus the check run). No RapidFlow
code is part of this repository; csm_peers.py's docstring says what is timed.
"""
from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: the per-update call in RapidFlow's StreamingEngine::evaluate_search that the check
#: variant makes print its count
PATCH_FILE = "streaming/streaming_engine.cpp"
PATCH_FUNCTION = "StreamingEngine::evaluate_search"
PATCH_ANCHOR = "execute(query_graph, update, true, true);"
CHECK_PREFIX = "WMCHECK"
PATCH_TEXT = ("{ const uint64_t wm_check_count = execute(query_graph, update, true, true); "
              f"printf(\"{CHECK_PREFIX} %llu\\n\", (unsigned long long) wm_check_count); }}")
#: bump when the build recipe or the patch changes (part of the cache key)
BUILD_RECIPE = "1"
_SOURCE_SUFFIXES = (".cpp", ".cc", ".c", ".h", ".hpp", ".txt", ".cmake")
_SKIP_DIRS = ("build", "CMakeFiles", ".git", "cmake-build-debug", "cmake-build-release")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)

# ====================================================================== RapidFlow build
class PatchError(RuntimeError):
    """The check variant's one-line change cannot be applied to these sources."""


@dataclass
class Peer:
    """The RapidFlow binaries to run.

    Attributes
    ----------
    plain : Path
        The published program (timed).
    check : Path or None
        The variant that prints each update's count, or None (totals only).
    note : str
        Why there is no check variant, or where the binaries come from.
    patch_failed : bool
        The check variant's one-line change did not apply to the sources.
    """

    plain: Path
    check: Path | None
    note: str
    patch_failed: bool = False


def _source_files(src: Path) -> list[Path]:
    out = []
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("build"))
        for f in sorted(files):
            if f.endswith(_SOURCE_SUFFIXES):
                out.append(Path(root) / f)
    return out


def source_hash(src: Path) -> str:
    """A short hash of RapidFlow's sources (paths and contents) and the build recipe."""
    h = hashlib.sha256(BUILD_RECIPE.encode())
    for p in _source_files(src):
        h.update(str(p.relative_to(src)).encode() + b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def patch_check_variant(text: str) -> str:
    """The text of ``streaming_engine.cpp`` with the per-update count printed.

    Parameters
    ----------
    text : str
        The file as published.

    Returns
    -------
    str
        The same text with the one call in ``StreamingEngine::evaluate_search``
        replaced by a block that makes the call and prints its result.

    Raises
    ------
    PatchError
        If the function or the call is not found exactly once.
    """
    start = text.find(PATCH_FUNCTION + "(")
    if start < 0 or text.find(PATCH_FUNCTION + "(", start + 1) >= 0:
        raise PatchError(f"{PATCH_FILE}: {PATCH_FUNCTION} not found exactly once")
    # the function ends where the next member function definition begins
    nxt = re.search(r"\n\S[^\n]*StreamingEngine::\w+\(", text[start + 1:])
    end = len(text) if nxt is None else start + 1 + nxt.start()
    body = text[start:end]
    if body.count(PATCH_ANCHOR) != 1:
        raise PatchError(f"{PATCH_FILE}: {PATCH_FUNCTION} calls {PATCH_ANCHOR!r} "
                         f"{body.count(PATCH_ANCHOR)} times (expected once)")
    return text[:start] + body.replace(PATCH_ANCHOR, PATCH_TEXT) + text[end:]


def _cmake_build(src: Path, build: Path, log: Path) -> Path:
    """``cmake`` + ``make`` of ``src`` into ``build``; the path of ``RapidFlow.out``."""
    build.mkdir(parents=True, exist_ok=True)
    jobs = str(os.cpu_count() or 1)
    with open(log, "w") as lf:
        # RapidFlow asks for CMake 2.8; CMake 4 refuses that without a policy floor
        for cmd in (["cmake", "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     "-DCMAKE_POLICY_VERSION_MINIMUM=3.5"],
                    ["cmake", "--build", str(build), "--target", "RapidFlow.out", "-j", jobs]):
            lf.write("$ " + " ".join(cmd) + "\n")
            lf.flush()
            rc = subprocess.call(cmd, stdout=lf, stderr=subprocess.STDOUT)
            if rc != 0:
                tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
                raise RuntimeError(f"building RapidFlow failed ({' '.join(cmd[:2])} exit {rc}); "
                                   f"log {log}:\n{tail}")
    exe = build / "streaming" / "RapidFlow.out"
    if not exe.is_file():
        raise RuntimeError(f"the build finished but {exe} is missing (log {log})")
    return exe


def _copy_sources(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=lambda d, names: [
        n for n in names if n in _SKIP_DIRS or n.startswith("build")
        or n.endswith((".out", ".o", ".a"))])


def build_rapidflow(src: Path, cache_dir: Path | None, want_plain: bool = True) -> Peer:
    """Build (or reuse) the plain and check binaries of the RapidFlow sources in ``src``.

    Parameters
    ----------
    src : Path
        RapidFlow's source directory (read only: each binary is built from a
        temporary copy).
    cache_dir : Path or None
        Where the builds go; ``None`` means
        ``~/.cache/warpmatch-bench/rapidflow-<hash>``.
    want_plain : bool, optional
        Also build the plain binary (``False`` when one was given).

    Returns
    -------
    Peer
        ``plain`` is ``None``-free only if ``want_plain``; ``check`` is None
        when the patch does not apply (``note`` says why).
    """
    if not (src / PATCH_FILE).is_file():
        raise SystemExit(f"--rapidflow {src}: not a RapidFlow source directory "
                         f"({PATCH_FILE} missing)")
    key = source_hash(src)
    root = (cache_dir if cache_dir is not None
            else Path.home() / ".cache" / "warpmatch-bench" / f"rapidflow-{key}")
    root.mkdir(parents=True, exist_ok=True)
    note = f"built from {src} in {root}"
    plain = root / "plain" / "streaming" / "RapidFlow.out"
    check = root / "check" / "streaming" / "RapidFlow.out"
    status_file = root / "check.status"
    stamp = root / "sources.hash"
    if stamp.is_file() and stamp.read_text().strip() != key:
        # a --peer-build-dir reused for other sources: rebuild everything
        for d in ("plain", "check"):
            shutil.rmtree(root / d, ignore_errors=True)
        status_file.unlink(missing_ok=True)
    stamp.write_text(key + "\n")
    with tempfile.TemporaryDirectory(prefix="wm_rapidflow_src_") as tmp:
        if want_plain and not plain.is_file():
            _log(f"building RapidFlow (plain) from {src} in {root / 'plain'} ...")
            copy = Path(tmp) / "plain"
            _copy_sources(src, copy)
            _cmake_build(copy, root / "plain", root / "plain.log")
        if not check.is_file() and not status_file.is_file():
            copy = Path(tmp) / "check"
            _copy_sources(src, copy)
            target = copy / PATCH_FILE
            try:
                target.write_text(patch_check_variant(target.read_text()))
            except PatchError as exc:
                status_file.write_text(f"patch failed: {exc}\n")
            else:
                _log(f"building RapidFlow (check variant) in {root / 'check'} ...")
                _cmake_build(copy, root / "check", root / "check.log")
    if check.is_file():
        return Peer(plain, check, note)
    why = status_file.read_text().strip() if status_file.is_file() else "not built"
    return Peer(plain, None, f"{note}; CHECK VARIANT UNAVAILABLE ({why}): comparing totals "
                             "only", patch_failed=status_file.is_file())


def resolve_peer(path: str, src: str | None, cache_dir: str | None) -> Peer:
    """The :class:`Peer` for ``--rapidflow`` (sources or a binary) and ``--rapidflow-src``.

    Parameters
    ----------
    path : str
        A RapidFlow source directory (both binaries are built) or an
        executable ``RapidFlow.out`` (timed as given).
    src : str or None
        With an executable: the sources to build the check variant from.
    cache_dir : str or None
        ``--peer-build-dir``.

    Returns
    -------
    Peer
    """
    p = Path(path).expanduser().resolve()
    cache = Path(cache_dir).expanduser().resolve() if cache_dir else None
    if p.is_dir():
        return build_rapidflow(p, cache)
    if not (p.is_file() and os.access(p, os.X_OK)):
        raise SystemExit(f"--rapidflow {path}: neither a source directory nor an executable")
    if src is None:
        return Peer(p, None, f"binary {p}; no --rapidflow-src: totals only")
    built = build_rapidflow(Path(src).expanduser().resolve(), cache, want_plain=False)
    return Peer(p, built.check, built.note.replace("built from", f"binary {p}; check variant "
                                                   "built from"), built.patch_failed)


# ====================================================================== file formats
def _write_lines(f: Any, columns: dict[str, Any]) -> None:
    """Space-separated rows, no header, no quoting (pyarrow's CSV writer: fast for 10^7 rows)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    pacsv.write_csv(pa.table(columns), f, pacsv.WriteOptions(
        include_header=False, delimiter=" ", quoting_style="none"))


def _tag(word: str, n: int) -> Any:
    import pyarrow as pa
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int8)), pa.array([word]))


def write_rf_graph(path: Path, n: int, src: np.ndarray, dst: np.ndarray,
                   vlabels: np.ndarray | None, elabels: np.ndarray | None) -> None:
    """Write a graph in RapidFlow's ``t/v/e`` format (every edge labeled; ids 0..n-1).

    Parameters
    ----------
    path : Path
    n : int
        Vertices; every vertex gets a ``v`` line (label 0 when unlabeled).
    src, dst : numpy.ndarray
        Undirected edges, each once.
    vlabels, elabels : numpy.ndarray or None
        Vertex and edge labels (``None``: 0 everywhere).
    """
    m = int(src.size)
    vl = np.zeros(n, np.int64) if vlabels is None else np.asarray(vlabels, np.int64)
    el = np.zeros(m, np.int64) if elabels is None else np.asarray(elabels, np.int64)
    with open(path, "wb") as f:
        f.write(f"t {n} {m}\n".encode())
        _write_lines(f, {"t": _tag("v", n), "id": np.arange(n, dtype=np.int64), "l": vl})
        _write_lines(f, {"t": _tag("e", m), "u": np.asarray(src, np.int64),
                         "v": np.asarray(dst, np.int64), "l": el})


def write_rf_stream(path: Path, src: np.ndarray, dst: np.ndarray, op: np.ndarray,
                    label: np.ndarray | None) -> None:
    """Write updates as RapidFlow's stream lines ``e u v l`` (insert) / ``-e u v l`` (delete)."""
    import pyarrow as pa
    n = int(src.size)
    codes = pa.array((np.asarray(op) < 0).astype(np.int8))
    tag = pa.DictionaryArray.from_arrays(codes, pa.array(["e", "-e"]))
    lab = np.zeros(n, np.int64) if label is None else np.asarray(label, np.int64)
    with open(path, "wb") as f:
        _write_lines(f, {"t": tag, "u": np.asarray(src, np.int64),
                         "v": np.asarray(dst, np.int64), "l": lab})


def rf_query_problem(query: Any, graph_labeled: bool, graph_edge_labeled: bool) -> str | None:
    """Why RapidFlow cannot run ``query`` with the same meaning (wildcard labels), or None."""
    if query.directed:
        return "directed query (RapidFlow is undirected)"
    if graph_labeled and np.any(query.vertex_labels < 0):
        return "query vertex without a label on a labeled graph (RapidFlow has no wildcard)"
    if graph_edge_labeled and np.any(query.edge_labels < 0):
        return "query edge without a label on an edge-labeled graph (RapidFlow has no wildcard)"
    return None


def write_rf_query(path: Path, query: Any) -> None:
    """Write a query in RapidFlow's format; a wildcard label (-1) becomes 0 (unlabeled graphs)."""
    vl = np.maximum(np.asarray(query.vertex_labels, np.int64), 0)
    el = np.maximum(np.asarray(query.edge_labels, np.int64), 0)
    lines = [f"t {query.k} {query.m}"]
    lines += [f"v {u} {int(vl[u])}" for u in range(query.k)]
    lines += [f"e {u} {w} {int(el[i])}" for i, (u, w) in enumerate(query.edges.tolist())]
    path.write_text("\n".join(lines) + "\n")


# ====================================================================== RapidFlow runs
_RE_QTIME = re.compile(r"^Query time \(seconds\):\s*([0-9.eE+-]+)", re.M)
_RE_COUNT = re.compile(r"^Result count:\s*(\d+)", re.M)
_RE_UPDATES = re.compile(r"^Updates num:\s*(\d+)", re.M)


def on_cpus(cpus: set[int] | None) -> Any:
    """A ``preexec_fn`` for :class:`subprocess.Popen` that keeps the child (and its
    threads) on ``cpus``, or ``None`` (no pinning): ``--pin-cpu`` of the benchmarks, so
    that a one-thread peer and warpmatch run on the same core and memory node."""
    if not cpus:
        return None
    want = set(cpus)
    return lambda: os.sched_setaffinity(0, want)


def run_rapidflow(binary: Path, graph_f: Path, query_f: Path, stream_f: Path, limit: float,
                  grace: float, workdir: Path, check: bool = False,
                  cpus: set[int] | None = None) -> dict[str, Any]:
    """Run RapidFlow once and parse its summary.

    Parameters
    ----------
    binary : Path
    graph_f, query_f, stream_f : Path
        ``G_0``, the query and the stream in RapidFlow's formats.
    limit : float
        Passed as ``-time_limit`` (whole seconds, rounded up).
    grace : float
        The process is killed ``limit + grace`` seconds after it started.
    workdir : Path
        Its working directory and where its output is kept.
    check : bool, optional
        Parse the check variant's per-update lines.
    cpus : set of int, optional
        Run it on these CPUs only (:func:`on_cpus`); the default, ``None``: anywhere.

    Returns
    -------
    dict
        ``status`` ("ok", "timeout", "crash" or "error"), ``seconds`` (Query
        time), ``count`` (Result count), ``updates`` (as it loaded them),
        ``per_update`` (numpy array, check runs), ``detail`` (why, if not ok).
    """
    tag = "check" if check else "plain"
    out_p, err_p = workdir / f"rf_{tag}.out", workdir / f"rf_{tag}.err"
    cmd = [str(binary), "-d", str(graph_f), "-q", str(query_f), "-u", str(stream_f),
           "-num", "MAX", "-time_limit", str(max(1, math.ceil(limit)))]
    with open(out_p, "wb") as out, open(err_p, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=workdir,
                                preexec_fn=on_cpus(cpus))
        try:
            rc = proc.wait(timeout=limit + grace)
            killed = False
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
            killed = True
        finally:            # interrupted (Ctrl-C, SIGTERM): leave no process behind
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    text = out_p.read_text(errors="replace")
    res: dict[str, Any] = {"status": "ok", "rc": rc}
    for key, rx, conv in (("seconds", _RE_QTIME, float), ("count", _RE_COUNT, int),
                          ("updates", _RE_UPDATES, int)):
        m = rx.search(text)
        res[key] = conv(m.group(1)) if m else None
    if check:
        res["per_update"] = np.asarray(
            [int(line.split()[1]) for line in text.splitlines()
             if line.startswith(CHECK_PREFIX + " ")], dtype=np.int64)
    if killed:
        res.update(status="timeout", detail=f"killed after {limit + grace:.0f} s")
    elif rc != 0:
        sig = f"signal {-rc}" if rc < 0 else f"exit {rc}"
        try:
            import signal as _signal
            sig = _signal.Signals(-rc).name if rc < 0 else sig
        except ValueError:
            pass
        tail = (err_p.read_text(errors="replace").strip().splitlines() or [""])[-1][:100]
        res.update(status="crash", detail=f"{sig}{': ' + tail if tail else ''}")
    elif "Time out..." in text:
        res.update(status="timeout", detail=f"RapidFlow's -time_limit {math.ceil(limit)} s")
    elif res["seconds"] is None or res["count"] is None or "Done." not in text:
        res.update(status="error", detail="no 'Query time'/'Result count' in its output")
    return res


def rapidflow_runs(peer: Peer, files: dict[str, Path], repeats: int, limit: float,
                   grace: float, workdir: Path, n_updates: int,
                   cpus: set[int] | None = None) -> dict[str, Any]:
    """The timed runs (median of ``repeats``; on ``cpus`` if given) and, if they
    finished, one check run."""
    runs = []
    for _ in range(repeats):
        r = run_rapidflow(peer.plain, files["graph"], files["query"], files["stream"], limit,
                          grace, workdir, cpus=cpus)
        runs.append(r)
        if r["status"] != "ok":
            break
    last = runs[-1]
    res: dict[str, Any] = {k: last.get(k) for k in ("status", "detail", "count", "updates")}
    res["runs"] = [{k: v for k, v in r.items() if k != "per_update"} for r in runs]
    if last["status"] == "ok":
        res["seconds"] = float(np.median([r["seconds"] for r in runs]))
        res["count"] = runs[0]["count"]
        if any(r["count"] != res["count"] for r in runs):
            res.update(status="error", detail="its count differs between repeats")
        elif last["updates"] is not None and last["updates"] != n_updates:
            res.update(status="error", detail=f"it loaded {last['updates']} updates, "
                                              f"not {n_updates}")
    res["per_update"] = None
    if res["status"] == "ok" and peer.check is not None:
        c = run_rapidflow(peer.check, files["graph"], files["query"], files["stream"], limit,
                          grace, workdir, check=True)
        pu = c.get("per_update")
        if c["status"] != "ok":
            res["check_note"] = f"check variant: {c['status']} ({c.get('detail')})"
        elif pu is None or pu.size != n_updates or int(pu.sum()) != res["count"]:
            res["check_note"] = (f"check variant printed {0 if pu is None else pu.size} "
                                 f"per-update counts summing to "
                                 f"{0 if pu is None else int(pu.sum())} (expected "
                                 f"{n_updates} summing to {res['count']})")
        else:
            res["per_update"] = pu
    elif res["status"] == "ok":
        res["check_note"] = "no check variant: totals compared, not per-update counts"
    return res
