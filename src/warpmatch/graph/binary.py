"""The ``.wmg`` binary graph cache: raw CSR arrays behind a small JSON header.

Loading maps the file read-only (``np.memmap``) and wraps the arrays as a
:class:`~warpmatch.graph.csr.Graph` without copying them, and the pages are
shared between processes by the OS page cache. ``warpmatch convert graph.txt
graph.wmg`` writes it.

Layout (all integers little-endian)::

    offset 0   8 bytes   magic  b"WMGRAPH\\0"
    offset 8   uint32    format version (2)
    offset 12  uint32    header length H in bytes
    offset 16  uint32    CRC-32 of the header bytes
    offset 20  uint32    reserved (0)
    offset 24  H bytes   JSON: {"n", "directed", "name", "report", "file_size",
                         "arrays": {name: {"dtype", "shape", "offset", "nbytes",
                                           "crc32"}}}, padded with spaces
    ...        arrays, each starting at a multiple of 64 bytes (cache-line and
               SIMD aligned), in the order of the header; zero bytes between

Only the arrays the graph has are stored; an undirected graph stores its
adjacency once (the in-arrays are the same arrays). Writing is atomic: the
file is written beside the target under a temporary name and renamed over it,
so a crash never leaves a half-written cache under the real name (and a
process that has the old file mapped keeps reading the old, intact inode).

Integrity: every byte is covered. The prefix fields are checked for their
values, the header by its CRC-32, each array by the CRC-32 in its header entry,
and the alignment gaps must be zero. On top of that, whatever the checksums
say, the arrays pass :func:`~warpmatch.graph.csr.check_csr` and
:func:`~warpmatch.graph.csr.check_labels`: offsets monotone from 0 to m, every
id in ``0..n-1``, rows strictly increasing, labels in range. The numba and CUDA
kernels index by these arrays without bounds checks, so a file that breaks
them, damaged or crafted, must never reach a kernel: these checks cannot be
turned off. Why both: the structural checks turn a bad file into an error
instead of a crash, the checksums into an error instead of a wrong count.
Not checked structurally, as no kernel reads out of bounds because of them
and the checksums cover damage: that an undirected adjacency is symmetric,
that a directed graph's in-arrays transpose its out-arrays, the absence of
self-loops, and distinct external ids (a sort, not linear).

Checksums are verified on load, by default, rather than lazily: ``zlib.crc32``
(the standard library's; no new dependency) runs at several GB/s, so on an
R-MAT graph of 15.2 million edges (134 MB) the checksums take about 0.02 s
and the structural checks 0.03 s, against 0.6 ms for the header alone, and a
count reads every page anyway. Verifying later would let a count start on
data that is then found to be bad. ``verify=False`` skips only the checksums
(for a file opened again and again in one trusted pipeline).

Versions: version 1 files (before checksums) still load, after the same
structural checks, with an :class:`UnverifiedCacheWarning` saying that damage
to their arrays cannot be detected and that ``warpmatch convert`` (from the
source file, or from the ``.wmg`` itself) writes a version 2 file. Rejecting
them would strand caches whose source file is gone.
"""
from __future__ import annotations

import json
import math
import os
import struct
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GraphError, InputFormatError
from .csr import INT32_MAX, BuildReport, Graph, check_csr, check_labels

__all__ = ["MAGIC", "VERSION", "UnverifiedCacheWarning", "load_binary", "save_binary",
           "mapped_path"]

MAGIC = b"WMGRAPH\x00"
#: the version this module writes; 1 (no array checksums) is still read
VERSION = 2
_READABLE = (1, 2)
ALIGN = 64
_PREFIX = struct.Struct("<8sIIII")
_ARRAYS = ("indptr", "indices", "edge_labels", "vertex_labels", "ids",
           "in_indptr", "in_indices", "in_edge_labels")
_DTYPES = {"<i4", "<i8", "|u1"}
#: bytes per zlib.crc32 call: the GIL is released inside each call, and a
#: memory-mapped array is read in slices rather than as one huge buffer
_CRC_CHUNK = 1 << 24


class UnverifiedCacheWarning(UserWarning):
    """A ``.wmg`` file of format version 1 was loaded: it has no array checksums."""


def _mapped_file(arr: Any) -> str | None:
    while isinstance(arr, np.ndarray) and not isinstance(arr, np.memmap) and \
            isinstance(arr.base, np.ndarray):
        arr = arr.base
    name = getattr(arr, "filename", None) if isinstance(arr, np.memmap) else None
    return os.fspath(name) if name else None


def mapped_path(graph: Graph) -> str | None:
    """The ``.wmg`` file all of ``graph``'s arrays are memory-mapped from
    (:func:`load_binary` with ``mmap=True``), or ``None`` (a graph in memory, or one
    whose labels, say, were replaced after reading)."""
    arrays = [a for a in (graph.indptr, graph.indices, graph.vertex_labels,
                          graph.edge_labels, graph.in_indptr, graph.in_indices,
                          graph.in_edge_labels, graph.ids) if a is not None]
    names = {_mapped_file(a) for a in arrays}
    if len(names) != 1:
        return None
    name = names.pop()
    return name if name and name.endswith(".wmg") else None


def _align(x: int) -> int:
    return (x + ALIGN - 1) // ALIGN * ALIGN


def _crc32(arr: np.ndarray) -> int:
    """CRC-32 of an array's bytes (C order), read in slices."""
    data = memoryview(np.ascontiguousarray(arr)).cast("B")
    crc = 0
    for a in range(0, len(data), _CRC_CHUNK):
        crc = zlib.crc32(data[a:a + _CRC_CHUNK], crc)
    return crc


def save_binary(graph: Graph, path: str | os.PathLike) -> None:
    """Write ``graph`` to a ``.wmg`` binary cache (format version 2), atomically.

    Parameters
    ----------
    graph : Graph
        The graph to store (arrays, labels, external ids, name, build report).
    path : str or os.PathLike
        The target file; its directory must exist.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "g.wmg"
    >>> save_binary(Graph.from_edges([0, 1], [1, 2], name="path"), p)
    >>> load_binary(p)
    <Graph 'path': 3 vertices, 2 edges, undirected>
    """
    path = Path(path)
    arrays: dict[str, np.ndarray] = {}
    names = _ARRAYS if graph.directed else _ARRAYS[:5]
    for name in names:
        arr = getattr(graph, name)
        if arr is not None:
            arr = np.asarray(arr)
            arrays[name] = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
    crcs = {name: _crc32(arr) for name, arr in arrays.items()}
    meta: dict[str, Any] = {
        "n": int(graph.n), "directed": bool(graph.directed), "name": graph.name,
        "report": {"self_loops": graph.report.self_loops, "duplicates": graph.report.duplicates,
                   "input_edges": graph.report.input_edges},
        "arrays": {},
    }
    # offsets depend on the header length, which depends on the offsets' digits:
    # lay out twice with a generous fixed header pad so the second pass is final
    header_room = 0
    for _ in range(3):
        offset = _align(_PREFIX.size + header_room)
        table = {}
        for name, arr in arrays.items():
            table[name] = {"dtype": arr.dtype.str, "shape": list(arr.shape),
                           "offset": offset, "nbytes": int(arr.nbytes), "crc32": crcs[name]}
            offset = _align(offset + arr.nbytes)
        meta["arrays"] = table
        meta["file_size"] = offset
        header = json.dumps(meta, sort_keys=True).encode("utf-8")
        if len(header) <= header_room:
            break
        header_room = len(header) + 64
    header = header.ljust(header_room, b" ")
    prefix = _PREFIX.pack(MAGIC, VERSION, len(header), zlib.crc32(header), 0)
    # atomic_path: a temporary file renamed into place (through a symlink, at its
    # target), the umask's mode, and a clear refusal for a device or FIFO
    from .._writers import atomic_path
    with atomic_path(path, keep_suffix=False) as tmp, open(tmp, "wb") as fh:
        fh.write(prefix)
        fh.write(header)
        for name, arr in arrays.items():
            # seeking past the end leaves a hole, which reads as the zero
            # padding the loader requires
            fh.seek(table[name]["offset"])
            fh.write(memoryview(arr).cast("B"))
        fh.truncate(meta["file_size"])


def load_binary(path: str | os.PathLike, mmap: bool = True, verify: bool = True,
                validate: bool | None = None) -> Graph:
    """Open a ``.wmg`` binary cache, checking that it is intact.

    Parameters
    ----------
    path : str or os.PathLike
        The file written by :func:`save_binary`.
    mmap : bool, optional
        Map the arrays read-only from the file (no copy; the OS page cache
        shares them between processes). The default is ``True``; ``False``
        reads them into memory.
    verify : bool, optional
        Compare each array's CRC-32 with the one stored in the header. The
        default is ``True`` (about 0.15 s per GB). ``False`` skips only this;
        the structural checks (offsets, ids, sorted rows, labels) always run,
        so a damaged file can still give a wrong count but never a crash.
    validate : bool or None, optional
        Ignored; kept so that callers of earlier versions keep working (the
        full structural validation it used to enable now always runs).

    Returns
    -------
    Graph
        Read-only arrays when memory-mapped.

    Raises
    ------
    InputFormatError
        If the file is not a warpmatch cache, is of an unknown version, is
        truncated or corrupted: the message names the file and the check that
        failed (which array, which vertex or position).

    Warns
    -----
    UnverifiedCacheWarning
        For a version 1 file with ``verify=True``: it has no array checksums.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "g.wmg"
    >>> save_binary(Graph.from_edges([0, 1], [1, 2]), p)
    >>> data = bytearray(p.read_bytes())
    >>> data[-64] ^= 1                 # the first byte of the last array, 'indices'
    >>> _ = p.write_bytes(data)
    >>> load_binary(p)
    Traceback (most recent call last):
    ...
    warpmatch.errors.InputFormatError: ...: corrupted: the checksum of array 'indices' ...
    """
    source = os.fspath(path)
    size = os.path.getsize(source)

    def bad(msg: str) -> InputFormatError:
        return InputFormatError(source, None, msg)

    if size == 0:
        raise bad("the file is empty")
    with open(source, "rb") as fh:
        prefix = fh.read(_PREFIX.size)
        if prefix[:len(MAGIC)] != MAGIC[:len(prefix)]:   # (the file is not empty here)
            raise bad("not a warpmatch binary graph (.wmg): bad magic bytes")
        if len(prefix) < _PREFIX.size:
            # the magic (or as much of it as there is) is right: the file was cut short
            raise bad(f"truncated: {len(prefix)} bytes, shorter than the "
                      f"{_PREFIX.size}-byte prefix")
        _, version, hlen, crc, reserved = _PREFIX.unpack(prefix)
        if version not in _READABLE:
            raise bad(f"unsupported .wmg version {version} (this warpmatch reads "
                      f"{', '.join(map(str, _READABLE))}); if the file is damaged or from a "
                      "newer warpmatch, run 'warpmatch convert' on its source file again")
        if reserved != 0:
            raise bad("corrupted: the reserved prefix field is not zero")
        if _PREFIX.size + hlen > size:
            raise bad(f"truncated: the header needs {_PREFIX.size + hlen} bytes, "
                      f"the file has {size}")
        header = fh.read(hlen)
    if zlib.crc32(header) != crc:
        raise bad("corrupted: the header checksum does not match")
    try:
        meta = json.loads(header)
        n = int(meta["n"])
        table = meta["arrays"]
        expected = int(meta["file_size"])
        directed = meta.get("directed", False)
        if not isinstance(table, dict) or not isinstance(directed, bool):
            raise TypeError("'arrays' must be an object and 'directed' a boolean")
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise bad(f"corrupted header ({type(exc).__name__}: {exc})") from None
    if size < expected:
        raise bad(f"truncated: {size} bytes, the header says {expected}")
    if size > expected:
        raise bad(f"corrupted: {size} bytes, the header says {expected}")
    specs = _array_specs(table, _PREFIX.size + hlen, size, bad)
    base = np.memmap(source, dtype=np.uint8, mode="r") if mmap and size else None
    _check_gaps(source, base, _PREFIX.size + hlen, specs, size, bad)
    arrays: dict[str, np.ndarray] = {}
    for name, (dt, count, off, _) in specs.items():
        if base is not None:
            arr = base[off:off + count * dt.itemsize].view(dt).view(np.ndarray)
        else:
            arr = np.fromfile(source, dtype=dt, count=count, offset=off)
        arrays[name] = arr
    if verify:
        if version >= 2 and any(s[3] is None for s in specs.values()):
            missing = next(k for k, s in specs.items() if s[3] is None)
            raise bad(f"corrupted header: array {missing!r} has no checksum")
        for name, (_, _, _, want) in specs.items():
            # a version 1 header has none; one that has them is checked whatever
            # the version field says, so a damaged version field cannot skip this
            if want is not None and _crc32(arrays[name]) != want:
                raise bad(f"corrupted: the checksum of array {name!r} does not match "
                          "(the file was damaged after it was written; run 'warpmatch "
                          "convert' on its source file again)")
    try:
        _check_structure(arrays, n, directed)
    except GraphError as exc:
        raise bad(f"corrupted: {exc}") from None
    if verify and version == 1 and all(s[3] is None for s in specs.values()):
        warnings.warn(f"{source}: a .wmg file of format version 1, without checksums: "
                      "damage to its arrays cannot be detected; 'warpmatch convert "
                      f"{source} NEW.wmg' (or from the source file) writes version "
                      f"{VERSION}", UnverifiedCacheWarning, stacklevel=2)
    rep = meta.get("report") or {}
    try:
        report = BuildReport(self_loops=int(rep.get("self_loops", 0)),
                             duplicates=int(rep.get("duplicates", 0)),
                             input_edges=int(rep.get("input_edges", 0)))
    except (ValueError, TypeError, AttributeError) as exc:
        raise bad(f"corrupted header: bad build report ({exc})") from None
    return Graph(
        n=n, indptr=arrays["indptr"], indices=arrays["indices"], directed=directed,
        vertex_labels=arrays.get("vertex_labels"), edge_labels=arrays.get("edge_labels"),
        in_indptr=arrays.get("in_indptr"), in_indices=arrays.get("in_indices"),
        in_edge_labels=arrays.get("in_edge_labels"), ids=arrays.get("ids"),
        name=str(meta.get("name", Path(source).stem)), report=report,
    )


_Spec = tuple[np.dtype, int, int, "int | None"]   # dtype, length, offset, CRC-32 (or None)


def _array_specs(table: dict[str, Any], header_end: int, size: int,
                 bad: Callable[[str], InputFormatError]) -> dict[str, _Spec]:
    """The header's array table, checked: known names and dtypes, 1-D, inside the file."""
    specs: dict[str, _Spec] = {}
    for name, spec in table.items():
        dtype = spec.get("dtype") if isinstance(spec, dict) else None
        if name not in _ARRAYS or dtype not in _DTYPES:
            raise bad(f"corrupted header: unexpected array {name!r} ({dtype})")
        try:
            dt = np.dtype(dtype)
            shape = [int(s) for s in spec["shape"]]
            off, nbytes = int(spec["offset"]), int(spec["nbytes"])
            want = spec.get("crc32")
            want = None if want is None else int(want)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise bad(f"corrupted header: array {name!r} ({exc})") from None
        # every array is one-dimensional; math.prod on Python ints cannot overflow
        if (len(shape) != 1 or shape[0] < 0 or math.prod(shape) * dt.itemsize != nbytes
                or off % ALIGN or off < header_end or off + nbytes > size):
            raise bad(f"corrupted header: array {name!r} does not fit the file")
        specs[name] = (dt, shape[0], off, want)
    return specs


def _check_gaps(source: str, base: np.ndarray | None, header_end: int,
                specs: dict[str, _Spec], size: int,
                bad: Callable[[str], InputFormatError]) -> None:
    """Arrays must not overlap, and the alignment padding around them must be zero.

    With this every byte of the file is covered by a check, so any damage is
    reported, not only damage that happens to hit a checksummed region.
    """
    regions = sorted((off, off + count * dt.itemsize, name)
                     for name, (dt, count, off, _) in specs.items())
    pos = header_end
    gaps = []
    for start, end, name in regions:
        if start < pos:
            raise bad(f"corrupted header: array {name!r} overlaps the data before it")
        gaps.append((pos, start))
        pos = end
    gaps.append((pos, size))
    for a, b in gaps:
        if b <= a:
            continue
        if base is not None:
            nonzero = bool(np.any(base[a:b]))
        else:
            with open(source, "rb") as fh:
                fh.seek(a)
                nonzero = fh.read(b - a).strip(b"\0") != b""
        if nonzero:
            raise bad(f"corrupted: the padding at bytes {a}..{b - 1} is not zero")


def _check_structure(arrays: dict[str, np.ndarray], n: int, directed: bool) -> None:
    """Every invariant the engines index by (see :func:`check_csr`), in linear time."""
    if not 0 <= n < INT32_MAX:
        raise GraphError(f"n={n} vertices is outside the supported 0..{INT32_MAX - 1}")
    need = ["indptr", "indices"] + (["in_indptr", "in_indices"] if directed else [])
    for name in need:
        if name not in arrays:
            raise GraphError(f"array {name!r} is missing")
    check_csr(n, arrays["indptr"], arrays["indices"])
    m = int(arrays["indices"].size)
    if directed:
        check_csr(n, arrays["in_indptr"], arrays["in_indices"], ("in_indptr", "in_indices"))
        if arrays["in_indices"].size != m:
            raise GraphError(f"in_indices has {arrays['in_indices'].size} entries, "
                             f"indices {m}: they must list the same arcs")
        if ("edge_labels" in arrays) != ("in_edge_labels" in arrays):
            raise GraphError("edge labels are stored for one direction only")
    elif m % 2:
        raise GraphError(f"indices has an odd number of entries ({m}) for an undirected "
                         "graph, which lists every edge twice")
    for lab, want in (("edge_labels", m), ("in_edge_labels", m), ("vertex_labels", n)):
        if lab in arrays and (directed or lab != "in_edge_labels"):
            check_labels(arrays[lab], want, lab)
    if "ids" in arrays and arrays["ids"].size != n:
        raise GraphError(f"ids has {arrays['ids'].size} entries, expected {n}")
