"""Building gMatch, for ``bench/gmatch_peer.py`` (see its docstring, "Build").

The build constants, the installed tools' versions (:func:`_version`, :func:`_gpu_arch`),
the build's stamp (:func:`source_hash`), the adapted copy of gMatch's sources
(:func:`prepare_sources`) and :func:`build_gmatch`.
"""
from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: the gMatch program this benchmark runs (its CMake target) and the folder of its sources
TARGET = "SubgraphMatching_unlabeled"
SOURCE_DIR = "neighbor"
#: bump when the build recipe changes (part of the build's stamp)
BUILD_RECIPE = "1"
#: CUDA 13's CCCL declares ``cuda::ceil_div``, which gMatch's ``helper.h`` macro
#: ``ceil_div(a, b)`` breaks when thrust/cub are included after it (join_bfs.cu,
#: mem_manager.h). Parsing thrust and cub first (nvcc ``--pre-include``) leaves the macro to
#: gMatch's own code. Used only when the plain build fails that way.
CCCL_FIX = "-DCMAKE_CUDA_FLAGS=--pre-include cub/cub.cuh --pre-include thrust/scan.h"


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _version(cmd: list[str], rx: str) -> tuple[int, ...] | None:
    try:
        text = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    except OSError:
        return None
    m = re.search(rx, text)
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def _gpu_arch() -> str | None:
    """The first GPU's compute capability as CMake spells it (``90``), or None."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, check=False).stdout.split()
    except OSError:
        return None
    return out[0].replace(".", "") if out else None


def reuse_build(exe: Path, stamp: Path, key: str, what: str) -> dict[str, Any] | None:
    """The stamp's record of an earlier build of ``exe`` from the same sources and recipe
    (``key``, :func:`source_hash`), marked ``reused``; ``None`` when it must be built
    again (no binary, no stamp, an unreadable stamp or another key)."""
    if not (exe.is_file() and stamp.is_file()):
        return None
    try:
        old = json.loads(stamp.read_text())
    except ValueError:
        return None
    if old.get("source_hash") != key:
        return None
    _log(f"{what}: reusing {exe}")
    return {**old, "reused": True}


def source_hash(src: Path, recipe: str) -> str:
    """A short hash of the files under ``src`` (paths and contents) and the build recipe."""
    h = hashlib.sha256(recipe.encode())
    for p in sorted(q for q in src.rglob("*") if q.is_file()):
        h.update(str(p.relative_to(src)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def prepare_sources(src: Path, dst: Path, arch: str,
                    cmake: tuple[int, ...]) -> tuple[list[str], str]:
    """Copy gMatch's ``neighbor/`` to ``dst`` and adapt the copy's CMakeLists.txt.

    gMatch's CMakeLists.txt asks for CMake 3.26 and hard-codes ``"native"`` as the CUDA
    architecture (``set(CMAKE_CUDA_ARCHITECTURES "native")`` and each library's
    ``CUDA_ARCHITECTURES`` property), so ``-DCMAKE_CUDA_ARCHITECTURES`` cannot override it.

    Parameters
    ----------
    src, dst : Path
        gMatch's ``neighbor/`` (read only) and the copy.
    arch : str
        ``native`` (gMatch's own: the GPU seen at configure time; CMake >= 3.24) or an
        architecture such as ``90`` (H100, H200), written over ``"native"`` in the copy.
    cmake : tuple of int
        The installed CMake's version: an older one than the copy asks for lowers the
        minimum (to at least 3.18, the first with ``CUDA_ARCHITECTURES``).

    Returns
    -------
    (list of str, str)
        What was changed in the copy (empty: nothing), and the architecture used.
    """
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("build", "build*", ".git"))
    cml = dst / "CMakeLists.txt"
    text = cml.read_text()
    patches = []
    m = re.search(r"cmake_minimum_required\s*\(\s*VERSION\s+([0-9.]+)", text)
    if m:
        need = tuple(int(x) for x in m.group(1).split("."))
        if cmake[:len(need)] < need:
            if cmake < (3, 18):
                raise SystemExit(f"CMake {'.'.join(map(str, cmake))} is too old for gMatch's "
                                 "CUDA build (3.18 at least; it asks for "
                                 f"{m.group(1)})")
            floor = f"{cmake[0]}.{cmake[1]}"
            text = text[:m.start(1)] + floor + text[m.end(1):]
            patches.append(f"cmake_minimum_required lowered from {m.group(1)} to {floor} "
                           f"(CMake {'.'.join(map(str, cmake))} installed)")
    if arch == "native" and cmake < (3, 24):
        arch = _gpu_arch() or ""
        if not arch:
            raise SystemExit("CMake < 3.24 cannot build for 'native' and nvidia-smi gave no "
                             "compute capability: pass --cuda-arch (90 for H100/H200)")
        patches.append(f"CMake < 3.24 has no 'native': the GPU's architecture {arch}")
    if arch != "native":
        if '"native"' not in text:
            raise SystemExit(f"{src / 'CMakeLists.txt'}: no \"native\" architecture to replace")
        text = text.replace('"native"', f'"{arch}"')
        patches.append(f'CUDA architecture "native" replaced by "{arch}"')
    cml.write_text(text)
    return patches, arch


def build_gmatch(gmatch_dir: Path, build_dir: Path, arch: str, jobs: int) -> tuple[Path, dict]:
    """Build (or reuse) gMatch's ``SubgraphMatching_unlabeled`` into ``build_dir``.

    The sources are copied to ``build_dir/src`` (:func:`prepare_sources`) and built in
    ``build_dir/build`` with ``cmake`` (Release) and ``cmake --build --target
    SubgraphMatching_unlabeled``, the log in ``build_dir/build.log``. A build whose stamp
    (sources, recipe, architecture) matches is reused. If the plain build fails on CUDA
    13's ``cuda::ceil_div`` (see ``CCCL_FIX``), it is retried once with that flag.

    Returns
    -------
    (Path, dict)
        The binary, and how it was built (commands, patches, log, versions).

    Raises
    ------
    SystemExit
        If the tree is not gMatch's, cmake is missing or the build fails (with the last
        lines of the log).
    """
    src = gmatch_dir / SOURCE_DIR
    if not (src / "CMakeLists.txt").is_file() or not (src / "main.cu").is_file():
        raise SystemExit(f"--gmatch {gmatch_dir}: not gMatch's source tree ({src}/CMakeLists.txt"
                         " and main.cu missing)")
    cmake = _version(["cmake", "--version"], r"cmake version (\d+\.\d+(?:\.\d+)?)")
    if cmake is None:
        raise SystemExit("cmake not found: gMatch is built with cmake and make")
    nvcc = _version(["nvcc", "--version"], r"release (\d+\.\d+)")
    build_dir.mkdir(parents=True, exist_ok=True)
    key = source_hash(src, f"{BUILD_RECIPE}/{arch}")
    exe = build_dir / "build" / TARGET
    stamp = build_dir / "build.stamp"
    info: dict[str, Any] = {"binary": str(exe), "source_hash": key, "arch": arch,
                            "cmake": ".".join(map(str, cmake)),
                            "nvcc": ".".join(map(str, nvcc)) if nvcc else None,
                            "log": str(build_dir / "build.log")}
    old = reuse_build(exe, stamp, key, f"gMatch (built from {src})")
    if old is not None:
        return exe, old
    stamp.unlink(missing_ok=True)
    patches, used_arch = prepare_sources(src, build_dir / "src", arch, cmake)
    info.update(patches=patches, arch=used_arch)
    log = build_dir / "build.log"
    jobs_s = str(max(1, jobs))
    with open(log, "w") as lf:
        for attempt, extra in enumerate(([], [CCCL_FIX])):
            shutil.rmtree(build_dir / "build", ignore_errors=True)
            cmds = [["cmake", "-S", str(build_dir / "src"), "-B", str(build_dir / "build"),
                     "-DCMAKE_BUILD_TYPE=Release", *extra],
                    ["cmake", "--build", str(build_dir / "build"), "--target", TARGET,
                     "-j", jobs_s]]
            failed = None
            for cmd in cmds:
                _log("gMatch build: " + shlex.join(cmd))
                lf.write("$ " + shlex.join(cmd) + "\n")
                lf.flush()
                t0 = time.perf_counter()
                rc = subprocess.call(cmd, stdout=lf, stderr=subprocess.STDOUT)
                lf.flush()
                if rc != 0:
                    failed = (cmd, rc)
                    break
                info.setdefault("build_seconds", 0.0)
                info["build_seconds"] += time.perf_counter() - t0
            if failed is None:
                info["commands"] = [shlex.join(c) for c in cmds]
                if extra:
                    info["patches"] = patches + [f"built with {extra[0]} (CUDA 13 ceil_div)"]
                break
            text = log.read_text(errors="replace")
            if attempt == 0 and "ceil_div" in text:
                _log("gMatch build: failed on cuda::ceil_div (CUDA >= 13 vs gMatch's macro); "
                     "retrying with thrust and cub parsed first")
                lf.write("\n# retry: " + CCCL_FIX + "\n")
                continue
            tail = "\n".join(text.splitlines()[-25:])
            raise SystemExit(f"building gMatch failed ({shlex.join(failed[0])}: exit "
                             f"{failed[1]}); log {log}, last lines:\n{tail}")
    if not exe.is_file():
        raise SystemExit(f"the gMatch build finished but {exe} is missing (log {log})")
    stamp.write_text(json.dumps(info, indent=1))
    return exe, {**info, "reused": False}
