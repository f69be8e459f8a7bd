"""warpmatch's side of ``bench/csm_peers.py``: its engines and their timed runs.

Part of ``csm_peers.py``'s benchmark, kept apart for length; the script's docstring
says what is timed. Map: the engine names (:data:`ENGINES`, :data:`ENGINE_TITLE`,
:func:`is_gpu`) and the warm-up and time-out constants < :func:`_jit_signatures` (numba
compilations, counted around the timed loop) and :func:`warm_parallel_region` (the CPU
batch path's parallel region, warmed once) < :func:`_wm_child` (the child process: load,
warm up, time ``apply_batches``, report one JSON line) and :func:`child_main` (its entry,
``csm_peers.py --_wm-child SPEC``) < :func:`run_warpmatch` (the parent: start the child,
kill it past its limits, read what it reported).
"""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from rapidflow_peer import on_cpus  # bench/ is on sys.path (csm_peers.py puts it there)

#: the engines run by default; each also as ``<engine>-rel``: ``keep="relevant"``, the
#: matcher keeps only the edges the query can read and takes the other updates as valid
#: without a look, as RapidFlow does (stream/keep.py)
DEFAULT_ENGINES = ("cpu1", "cpuN", "gpu")
ENGINES = DEFAULT_ENGINES + tuple(f"{e}-rel" for e in DEFAULT_ENGINES)
ENGINE_TITLE = {"cpu1": "CPU-1", "cpuN": "CPU-N", "gpu": "GPU"}
ENGINE_TITLE.update({f"{e}-rel": f"{t} rel" for e, t in list(ENGINE_TITLE.items())})


def is_gpu(engine: str) -> bool:
    """Whether ``engine`` (one of :data:`ENGINES`) runs on the GPU."""
    return engine.startswith("gpu")


#: the warm-up's updates are applied in this many batches ...
WARMUP_BATCHES = 8
#: ... and it stops after this share of the warpmatch time limit
WARMUP_SHARE = 0.25


def _jit_signatures() -> int:
    """Compiled signatures of every live numba dispatcher (grows when anything compiles).

    Walks the garbage collector's objects, so dispatchers that plan-specific
    factories create are counted too; called outside the timed loop only.
    """
    import gc
    try:
        from numba.core.dispatcher import Dispatcher
    except ImportError:
        return 0
    # type(), not isinstance(): some live objects (lazy proxies) raise on __class__
    return sum(len(o.signatures) for o in gc.get_objects() if issubclass(type(o), Dispatcher))


#: setup seconds (load, warm-up) allowed to an engine's children until one finished: the
#: first may compile numba's kernels from a cold cache
COLD_SETUP_S = 300.0
#: seconds between two writes of the per-update counts a timed child has finished
PROGRESS_S = 0.25
#: the script a child runs (``--_wm-child SPEC``: :func:`child_main`)
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "csm_peers.py")


def warm_parallel_region(g0: Any, query: Any, ups: Any, **options: Any) -> None:
    """Run the CPU engine's batch path, parallel region included, once on ``ups``.

    That region (stream/cpu.py run_tasks) runs only for a batch whose searches look
    heavy, which a warm-up's batches may not be: its first use would then compile inside
    a timed run. Here on a batch-path matcher (``sequential=False``, ``options`` as for
    :class:`~warpmatch.ContinuousMatcher`) whose threshold for going parallel is 0, in
    this process's copy of the module only.
    """
    import warpmatch as wm
    import warpmatch.stream.cpu as wm_cpu
    keep_threshold, wm_cpu.PARALLEL_S = wm_cpu.PARALLEL_S, 0.0
    try:
        par = wm.ContinuousMatcher(g0, query, backend="cpu", count_initial=False,
                                   sequential=False, **options)
        for _ in par.apply_batches(ups, len(ups), counts_only=True):
            pass
    finally:
        wm_cpu.PARALLEL_S = keep_threshold


def _wm_child(spec_path: str) -> None:
    """Child process: load, warm up on a separate matcher, time ``apply_batches``, report."""
    spec = json.loads(Path(spec_path).read_text())
    import warpmatch as wm
    from warpmatch.stream.types import Updates
    g0 = wm.read_graph(spec["graph"])
    with open(spec["query"], "rb") as f:
        query = pickle.load(f)
    z = np.load(spec["updates"])
    ups = Updates(src=z["src"], dst=z["dst"], op=z["op"],
                  label=z["label"] if "label" in z.files else None, source="bench stream")
    backend, batch, limit = spec["backend"], int(spec["batch"]), float(spec["limit"])
    opts: dict[str, Any] = ({"threads": spec["threads"], "specialise": spec["specialise"]}
                            if backend == "cpu" else {})

    def matcher() -> Any:
        return wm.ContinuousMatcher(g0, query, backend=backend, count_initial=False,
                                    keep=spec.get("keep", "all"), **opts)

    # warm-up: a separate matcher, the stream's first updates in WARMUP_BATCHES batches
    # (some kernels first run on a later batch); compilation happens here. It stops early
    # (between batches) after WARMUP_SHARE of the time limit: on a heavy query a few
    # updates already compile everything, and the timed loop is retimed if not
    w = min(len(ups), max(1, int(spec["warmup"])))
    warm = matcher()
    t_warm = time.perf_counter()
    for _ in warm.apply_batches(ups.slice(0, w), max(1, -(-w // WARMUP_BATCHES)),
                                counts_only=True):
        if time.perf_counter() - t_warm > WARMUP_SHARE * limit:
            break
    threads = None
    compiled = {}
    if backend == "cpu" and spec["threads"] != 1 and \
            time.perf_counter() - t_warm < WARMUP_SHARE * limit:
        # (on a cold numba cache its first call compiled for ~50 s in the timed loop of
        # a 16-vertex query)
        warm_parallel_region(g0, query, ups.slice(0, w), keep=spec.get("keep", "all"),
                             threads=spec["threads"])
    if backend == "cpu":
        threads = warm.engine._threads() if hasattr(warm.engine, "_threads") else spec["threads"]
        sp = getattr(getattr(warm, "_seq", None), "special", None)
        if sp is not None:      # the plans compiled for the query (once per machine)
            compiled = {"compiled_plans": len(sp.plans), "compile_s": round(sp.seconds, 3),
                        "compile_cached": sp.cached}
    del warm
    n = len(ups)
    reps: list[dict[str, Any]] = []
    first: np.ndarray | None = None
    jit_retimed = 0
    jit_kept = 0
    rep = 0
    while rep < int(spec["repeats"]):
        # before the matcher: the count walks every Python object (gc.get_objects), which
        # would leave the caches cold for the timed loop
        jit0 = _jit_signatures()
        cm = matcher()
        counts = np.zeros(n, dtype=np.int64)
        done = 0
        timed_out = False
        progress = open(spec["progress"], "wb") if rep == 0 else None
        Path(spec["marker"]).write_text(f"{rep} {time.time()}\n")   # the parent's deadline
        written = 0
        t0 = t_written = time.perf_counter()
        for d in cm.apply_batches(ups, batch, counts_only=True):
            b = len(d)
            counts[done:done + b] = d.plus_counts + d.minus_counts
            done += b
            now = time.perf_counter()
            if progress is not None and now - t_written > PROGRESS_S:
                # what the parent can still check if it kills us; written now and then,
                # not per batch (a write and a flush cost tens of µs a batch)
                progress.write(counts[written:done].tobytes())
                progress.flush()
                written, t_written = done, time.perf_counter()
            if now - t0 > limit and done < n:
                timed_out = True
                break
        seconds = time.perf_counter() - t0
        if progress is not None:
            progress.write(counts[written:done].tobytes())
            progress.close()
        jit = _jit_signatures() - jit0
        if jit and not timed_out and jit_retimed == 0:
            # numba compiled (or loaded from its cache) during the loop: time it again
            jit_retimed = jit
            continue
        jit_kept += jit
        rep_info = {"seconds": seconds, "updates": done, "timed_out": timed_out}
        seq = getattr(cm, "_seq", None)
        if seq is not None:     # which CPU path took the updates (the rest: the batch path)
            rep_info["sequential_updates"] = seq.stats["updates"]
        reps.append(rep_info)
        if rep == 0:
            first = counts[:done].copy()
        elif not np.array_equal(counts[:done], first[:done]):
            raise RuntimeError(f"repeat {rep} gave different per-update counts")
        if timed_out:
            break
        rep += 1
    np.save(spec["counts"], first)
    print(json.dumps({"repeats": reps, "threads": threads, "backend": backend,
                      "jit_in_timing": jit_kept, "jit_retimed": jit_retimed, **compiled}),
          flush=True)


def child_main(spec_path: str) -> int:
    """A child's entry (``csm_peers.py --_wm-child SPEC``): :func:`_wm_child`, and on an
    error one JSON line for the parent's table before the traceback."""
    try:
        _wm_child(spec_path)
    except Exception as exc:   # one line for the parent's table: type and first lines
        lines = list(dict.fromkeys(x.strip() for x in str(exc).splitlines() if x.strip()))
        print(json.dumps({"error": f"{type(exc).__name__}: {' / '.join(lines[:3])}"[:300]}),
              flush=True)
        raise
    return 0


def run_warpmatch(files: dict[str, Path], engine: str, batch: int, limit: float, grace: float,
                  setup_limit: float, warmup: int, repeats: int, workdir: Path,
                  n_updates: int, specialise: str = "always",
                  cpus: set[int] | None = None) -> dict[str, Any]:
    """Time one warpmatch engine on a workload in a child process (on ``cpus`` only, if
    given: ``--pin-cpu``).

    Returns
    -------
    dict
        ``status`` ("ok", "timeout" or "error"), ``seconds`` (median over the
        repeats), ``updates`` (processed), ``per_update`` (numpy array of the
        processed prefix), ``threads``, ``detail``.
    """
    backend = "gpu" if is_gpu(engine) else "cpu"
    threads = 1 if engine.startswith("cpu1") else None
    tag = f"wm_{engine}"
    spec = {"graph": str(files["wmg"]), "query": str(files["pickle"]),
            "updates": str(files["npz"]), "backend": backend, "threads": threads,
            "batch": batch, "limit": limit, "warmup": warmup, "repeats": repeats,
            "specialise": specialise,
            "keep": "relevant" if engine.endswith("-rel") else "all",
            "marker": str(workdir / f"{tag}.marker"), "progress": str(workdir / f"{tag}.prog"),
            "counts": str(workdir / f"{tag}.npy")}
    for k in ("marker", "progress", "counts"):
        Path(spec[k]).unlink(missing_ok=True)
    spec_p = workdir / f"{tag}.json"
    spec_p.write_text(json.dumps(spec))
    out_p, err_p = workdir / f"{tag}.out", workdir / f"{tag}.err"
    start = time.time()
    killed = None
    with open(out_p, "wb") as out, open(err_p, "wb") as err:
        proc = subprocess.Popen([sys.executable, SCRIPT, "--_wm-child", str(spec_p)],
                                stdout=out, stderr=err, preexec_fn=on_cpus(cpus))
        marker = Path(spec["marker"])
        try:
            while proc.poll() is None:
                now = time.time()
                if marker.is_file():
                    try:
                        began = float(marker.read_text().split()[1])
                    except (IndexError, ValueError):
                        began = now
                    if now > began + limit + grace:
                        killed = f"a batch ran past the {limit:g} s limit by {grace:g} s: killed"
                elif now > start + setup_limit:
                    killed = f"setup (load, warm-up) took more than {setup_limit:g} s: killed"
                if killed:
                    break
                time.sleep(0.05)
        finally:            # killed by us, or interrupted: leave no process behind
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    res: dict[str, Any] = {"engine": engine, "backend": backend}
    if killed:
        prog = Path(spec["progress"])
        done = (np.frombuffer(prog.read_bytes(), dtype=np.int64).copy() if prog.is_file()
                else np.zeros(0, np.int64))
        res.update(status="timeout", detail=killed, updates=int(done.size), per_update=done,
                   seconds=None)
        return res
    text = out_p.read_text(errors="replace").strip()
    info: dict[str, Any] = {}
    if text:
        try:
            info = json.loads(text.splitlines()[-1])
        except ValueError:
            info = {}
    if proc.returncode != 0 or "repeats" not in info:
        tail = info.get("error") or (err_p.read_text(errors="replace").strip().splitlines()
                                     or [f"exit {proc.returncode}"])[-1][:160]
        res.update(status="error", detail=tail, updates=0, per_update=None, seconds=None)
        return res
    reps = info["repeats"]
    res["threads"] = info["threads"]
    res["jit_in_timing"] = info["jit_in_timing"]
    res["jit_retimed"] = info.get("jit_retimed", 0)
    for key in ("compiled_plans", "compile_s", "compile_cached"):
        if key in info:
            res[key] = info[key]
    res["per_update"] = np.load(spec["counts"])
    res["runs"] = reps
    if reps[-1]["timed_out"]:
        r = reps[-1]
        res.update(status="timeout", updates=r["updates"], seconds=None,
                   detail=f"stopped after {r['updates']:,}/{n_updates:,} updates in "
                          f"{r['seconds']:.1f} s (limit {limit:g} s)",
                   partial_rate=r["updates"] / max(r["seconds"], 1e-12))
    else:
        res.update(status="ok", updates=n_updates,
                   seconds=float(np.median([r["seconds"] for r in reps])))
    return res
