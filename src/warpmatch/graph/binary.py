"""The ``.wmg`` binary graph cache: raw CSR arrays behind a small JSON header.

Loading maps the file read-only (``np.memmap``) and wraps the arrays as a
:class:`~warpmatch.graph.csr.Graph` without copying or re-validating edges, so
opening a billion-edge cache costs milliseconds and the pages are read on
demand (and shared between processes by the OS page cache). ``warpmatch
convert graph.txt graph.wmg`` writes it.

Layout (all integers little-endian)::

    offset 0   8 bytes   magic  b"WMGRAPH\\0"
    offset 8   uint32    format version (1)
    offset 12  uint32    header length H in bytes
    offset 16  uint32    CRC-32 of the header bytes
    offset 20  uint32    reserved (0)
    offset 24  H bytes   JSON: {"n", "directed", "name", "report", "file_size",
                         "arrays": {name: {"dtype", "shape", "offset", "nbytes"}}}
    ...        arrays, each starting at a multiple of 64 bytes (cache-line and
               SIMD aligned), in the order of the header

Only the arrays the graph has are stored; an undirected graph stores its
adjacency once (the in-arrays are the same arrays). Writing is atomic: the
file is written beside the target under a temporary name and renamed over it,
so a crash never leaves a half-written cache under the real name. A truncated
or corrupted file is detected on load from the header's CRC and the sizes
(cheap checks, done always); ``validate=True`` also checks every offset and
id (linear time).
"""
from __future__ import annotations

import json
import os
import struct
import tempfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputFormatError
from .csr import BuildReport, Graph

__all__ = ["save_binary", "load_binary", "MAGIC", "VERSION"]

MAGIC = b"WMGRAPH\x00"
VERSION = 1
ALIGN = 64
_PREFIX = struct.Struct("<8sIIII")
_ARRAYS = ("indptr", "indices", "edge_labels", "vertex_labels", "ids",
           "in_indptr", "in_indices", "in_edge_labels")
_DTYPES = {"<i4", "<i8", "|u1"}


def _align(x: int) -> int:
    return (x + ALIGN - 1) // ALIGN * ALIGN


def save_binary(graph: Graph, path: str | os.PathLike) -> None:
    """Write ``graph`` to a ``.wmg`` binary cache, atomically.

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
                           "offset": offset, "nbytes": int(arr.nbytes)}
            offset = _align(offset + arr.nbytes)
        meta["arrays"] = table
        meta["file_size"] = offset
        header = json.dumps(meta, sort_keys=True).encode("utf-8")
        if len(header) <= header_room:
            break
        header_room = len(header) + 64
    header = header.ljust(header_room, b" ")
    prefix = _PREFIX.pack(MAGIC, VERSION, len(header), zlib.crc32(header), 0)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial",
                               dir=path.parent if str(path.parent) else ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(prefix)
            fh.write(header)
            for name, arr in arrays.items():
                fh.seek(table[name]["offset"])
                fh.write(memoryview(arr).cast("B"))
            fh.truncate(meta["file_size"])
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load_binary(path: str | os.PathLike, mmap: bool = True, validate: bool = False) -> Graph:
    """Open a ``.wmg`` binary cache.

    Parameters
    ----------
    path : str or os.PathLike
        The file written by :func:`save_binary`.
    mmap : bool, optional
        Map the arrays read-only from the file (near-instant, pages read on
        demand). The default is ``True``; ``False`` reads them into memory.
    validate : bool, optional
        Also check every offset, id and label (linear time). The default is
        ``False``: only the header's CRC, the sizes and the first/last offsets.

    Returns
    -------
    Graph
        Read-only arrays when memory-mapped.

    Raises
    ------
    InputFormatError
        If the file is not a warpmatch cache, is of an unknown version, is
        truncated or corrupted (the message says which check failed).
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
        _, version, hlen, crc, _ = _PREFIX.unpack(prefix)
        if version != VERSION:
            raise bad(f"unsupported .wmg version {version} (this warpmatch reads {VERSION})")
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
    except (ValueError, KeyError, TypeError) as exc:
        raise bad(f"corrupted header ({exc})") from None
    if size < expected:
        raise bad(f"truncated: {size} bytes, the header says {expected}")
    if size > expected:
        raise bad(f"corrupted: {size} bytes, the header says {expected}")
    arrays: dict[str, np.ndarray] = {}
    base = np.memmap(source, dtype=np.uint8, mode="r") if mmap else None
    for name, spec in table.items():
        if name not in _ARRAYS or spec.get("dtype") not in _DTYPES:
            raise bad(f"corrupted header: unexpected array {name!r} ({spec.get('dtype')})")
        dt = np.dtype(spec["dtype"])
        shape = tuple(int(s) for s in spec["shape"])
        off, nbytes = int(spec["offset"]), int(spec["nbytes"])
        if (int(np.prod(shape)) * dt.itemsize != nbytes or off % ALIGN
                or off + nbytes > size):
            raise bad(f"corrupted header: array {name!r} does not fit the file")
        if base is not None:
            arr = base[off:off + nbytes].view(dt).reshape(shape).view(np.ndarray)
        else:
            arr = np.fromfile(source, dtype=dt, count=nbytes // dt.itemsize, offset=off)
            arr = arr.reshape(shape)
        arrays[name] = arr
    directed = bool(meta.get("directed", False))
    need = ["indptr", "indices"] + (["in_indptr", "in_indices"] if directed else [])
    for name in need:
        if name not in arrays:
            raise bad(f"corrupted header: array {name!r} is missing")
    for p, i in (("indptr", "indices"), ("in_indptr", "in_indices")):
        if p not in arrays:
            continue
        ptr, idx = arrays[p], arrays[i]
        if ptr.size != n + 1 or int(ptr[0]) != 0 or int(ptr[-1]) != idx.size:
            raise bad(f"corrupted: {p} does not describe {i} ({ptr.size} offsets for "
                      f"n={n}, {idx.size} entries)")
    for lab, ref in (("edge_labels", "indices"), ("in_edge_labels", "in_indices"),
                     ("vertex_labels", None), ("ids", None)):
        if lab in arrays:
            want = n if ref is None else arrays[ref].size
            if arrays[lab].size != want:
                raise bad(f"corrupted: {lab} has {arrays[lab].size} entries, expected {want}")
    if directed and ("edge_labels" in arrays) != ("in_edge_labels" in arrays):
        raise bad("corrupted: edge labels are stored for one direction only")
    if validate:
        _validate(arrays, n, bad)
    rep = meta.get("report") or {}
    return Graph(
        n=n, indptr=arrays["indptr"], indices=arrays["indices"], directed=directed,
        vertex_labels=arrays.get("vertex_labels"), edge_labels=arrays.get("edge_labels"),
        in_indptr=arrays.get("in_indptr"), in_indices=arrays.get("in_indices"),
        in_edge_labels=arrays.get("in_edge_labels"), ids=arrays.get("ids"),
        name=str(meta.get("name", Path(source).stem)),
        report=BuildReport(self_loops=int(rep.get("self_loops", 0)),
                           duplicates=int(rep.get("duplicates", 0)),
                           input_edges=int(rep.get("input_edges", 0))),
    )


def _validate(arrays: dict[str, np.ndarray], n: int, bad: Any) -> None:
    """Linear-time checks of every CSR invariant Graph.from_edges guarantees."""
    for p, i in (("indptr", "indices"), ("in_indptr", "in_indices")):
        if p not in arrays:
            continue
        ptr, idx = arrays[p], arrays[i]
        if np.any(np.diff(ptr) < 0):
            raise bad(f"corrupted: {p} is not non-decreasing")
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
            raise bad(f"corrupted: {i} holds an id outside 0..{n - 1}")
        if idx.size > 1:
            rows = np.repeat(np.arange(n), np.diff(ptr))
            step = np.diff(idx.astype(np.int64))
            same_row = rows[1:] == rows[:-1]
            if np.any(same_row & (step <= 0)):
                raise bad(f"corrupted: a row of {i} is not strictly increasing")
    for lab in ("edge_labels", "in_edge_labels", "vertex_labels"):
        if lab in arrays and arrays[lab].size and int(arrays[lab].min()) < 0:
            raise bad(f"corrupted: {lab} holds a negative label")
