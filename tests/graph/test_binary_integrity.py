"""A damaged or crafted ``.wmg`` file is an error naming the file, never a crash or a wrong count.

Covers the format's integrity checks (:mod:`warpmatch.graph.binary`): every
single-byte flip of a small cache, the structural checks that hold whatever
the checksums say (:func:`warpmatch.graph.csr.check_csr`), version 1 files,
a real ``warpmatch count`` subprocess, and the warm-up that a count on a
``.wmg`` reports apart from its ``seconds``.
"""
from __future__ import annotations

import json
import struct
import subprocess
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest
from graph_helpers import assert_same_graph

import warpmatch as wm
from warpmatch import api
from warpmatch.errors import GraphError, InputFormatError
from warpmatch.graph import Graph, erdos_renyi, load_binary, save_binary
from warpmatch.graph import csr as csr_mod
from warpmatch.graph.binary import UnverifiedCacheWarning
from warpmatch.graph.csr import check_csr

# ------------------------------------------------------------------ helpers


def _full_graph() -> Graph:
    """Directed, vertex- and edge-labeled, with external ids: all eight arrays are stored."""
    src = [0, 1, 2, 2, 3, 4, 0, 5]
    dst = [1, 2, 0, 3, 4, 2, 5, 1]
    return Graph.from_edges(src, dst, vertex_labels=[1, 2, 1, 3, 2, 1],
                            edge_labels=[7, 8, 7, 9, 8, 7, 9, 8], directed=True,
                            ids=[10, 11, 12, 13, 14, 15], name="full")


def _layout(data: bytes | bytearray) -> tuple[int, dict]:
    """(header end, header JSON) of a cache's bytes."""
    hlen = struct.unpack("<I", data[12:16])[0]
    return 24 + hlen, json.loads(bytes(data[24:24 + hlen]))


def _rewrite_header(data: bytearray, meta: dict, version: int | None = None) -> bytearray:
    """``data`` with its header replaced by ``meta`` (same room, valid header CRC)."""
    end, _ = _layout(data)
    room = end - 24
    header = json.dumps(meta, sort_keys=True).encode().ljust(room, b" ")
    assert len(header) == room
    out = bytearray(data)
    out[24:end] = header
    out[16:20] = struct.pack("<I", zlib.crc32(header))
    if version is not None:
        out[8:12] = struct.pack("<I", version)
    return out


def _put_array(data: bytearray, meta: dict, name: str, values: np.ndarray,
               fix_crc: bool = True) -> bytearray:
    """Overwrite array ``name`` in place with ``values`` (same size); optionally re-checksum."""
    spec = meta["arrays"][name]
    raw = np.ascontiguousarray(values, dtype=spec["dtype"]).tobytes()
    assert len(raw) == spec["nbytes"]
    data[spec["offset"]:spec["offset"] + len(raw)] = raw
    if fix_crc:
        spec["crc32"] = zlib.crc32(raw)
        data = _rewrite_header(data, meta)
    return data


@pytest.fixture()
def cache(tmp_path: Path) -> tuple[Path, Graph, bytes]:
    g = _full_graph()
    p = tmp_path / "g.wmg"
    save_binary(g, p)
    return p, g, p.read_bytes()


# ------------------------------------------------------- every byte flipped


def test_every_single_byte_flip_is_an_error_naming_the_file(cache) -> None:
    """Every byte is covered (prefix fields, header CRC, array CRCs, zero padding)."""
    p, g, good = cache
    assert len(good) < 4096           # small enough to flip every byte
    missed = []
    with open(p, "r+b", buffering=0) as fh:     # patch in place: rewriting files is slow
        for pos in range(len(good)):
            fh.seek(pos)
            fh.write(bytes([good[pos] ^ 0xFF]))
            try:
                h = load_binary(p, mmap=pos % 2 == 0)     # both loaders, alternately
            except InputFormatError as exc:
                assert str(exc).startswith(f"{p}: ")
                assert "\n" not in str(exc)
            else:
                assert_same_graph(g, h)       # only a flip in unused bytes could load
                missed.append(pos)
            fh.seek(pos)
            fh.write(good[pos:pos + 1])
    assert missed == []


def test_flips_in_the_arrays_without_checksums_never_reach_a_kernel(cache) -> None:
    """``verify=False``: each flip is an error or a graph the CPU engine counts without crashing."""
    p, _, good = cache
    _, meta = _layout(good)
    first = min(a["offset"] for a in meta["arrays"].values())
    loaded = 0
    for pos in range(first, len(good), 5):
        data = bytearray(good)
        data[pos] ^= 0x5A
        p.write_bytes(data)
        try:
            # in memory: a mapped graph still in use must not see the next rewrite
            h = load_binary(p, mmap=False, verify=False)
        except InputFormatError as exc:
            assert str(exc).startswith(f"{p}: corrupted")
            continue
        loaded += 1
        # labels or ids changed, structure intact: the count may differ, but it runs
        assert wm.count(h, "a->b, b->c", backend="cpu") >= 0
    assert loaded > 0                 # some flips (labels, ids) do load


@pytest.mark.parametrize("where,fragment", [
    ("magic", "bad magic"),
    ("version", "unsupported .wmg version"),
    ("header-length", "header"),
    ("header-crc", "header checksum"),
    ("reserved", "reserved prefix field"),
    ("header-json", "header checksum"),
    ("array-crc-in-header", "header checksum"),
    ("indptr", "checksum of array 'indptr'"),
    ("indices", "checksum of array 'indices'"),
    ("in_indices", "checksum of array 'in_indices'"),
    ("vertex_labels", "checksum of array 'vertex_labels'"),
    ("edge_labels", "checksum of array 'edge_labels'"),
    ("ids", "checksum of array 'ids'"),
    ("padding", "padding at bytes"),
    ("truncated", "truncated"),
    ("extended", "corrupted"),
])
def test_damage_at_each_place_is_named(cache, where: str, fragment: str) -> None:
    p, _, good = cache
    _, meta = _layout(good)
    data = bytearray(good)
    fixed = {"magic": 3, "version": 9, "header-length": 13, "header-crc": 17,
             "reserved": 21, "header-json": 30,
             "array-crc-in-header": good.index(b'"crc32"') + 10}
    if where in fixed:
        data[fixed[where]] ^= 0x10
    elif where in meta["arrays"]:
        spec = meta["arrays"][where]
        data[spec["offset"] + spec["nbytes"] - 1] ^= 0x01     # the last byte
    elif where == "padding":
        spec = meta["arrays"]["indptr"]
        data[spec["offset"] + spec["nbytes"]] = 0xAB          # just after indptr
    elif where == "truncated":
        data = data[:len(data) - 100]
    else:
        data += b"\0" * 64
    p.write_bytes(data)
    with pytest.raises(InputFormatError, match=fragment) as ei:
        wm.read_graph(p)
    assert str(ei.value).startswith(str(p))


# -------------------------------------- structure, whatever the checksums say


def _bad_structures(g: Graph) -> list[tuple[str, np.ndarray, str]]:
    """(array, replacement values, message fragment) for arrays with valid checksums."""
    ind, ptr = g.indices.copy(), g.indptr.copy()
    out = []
    a = ind.copy()
    a[0] = g.n + 5
    out.append(("indices", a, "outside 0..5"))
    a = ind.copy()
    a[0] = -1
    out.append(("indices", a, "holds the id -1"))
    row = int(np.flatnonzero(np.diff(ptr) >= 2)[0])          # a row with two entries
    a = ind.copy()
    a[ptr[row]], a[ptr[row] + 1] = a[ptr[row] + 1], a[ptr[row]]
    out.append(("indices", a, f"row of vertex {row} in indices is not strictly increasing"))
    a = ind.copy()
    a[ptr[row] + 1] = a[ptr[row]]
    out.append(("indices", a, "not strictly increasing"))    # a duplicate neighbour
    p = ptr.copy()
    p[3] = p[2] - 1
    out.append(("indptr", p, "indptr decreases at vertex"))
    p = ptr.copy()
    p[-1] = ptr[-1] - 1
    out.append(("indptr", p, "expected 0 to"))
    p = ptr.copy()
    p[2] = 10**12
    out.append(("indptr", p, "outside 0.."))
    p = g.in_indptr.copy()
    p[1] = -3
    out.append(("in_indptr", p, "in_indptr holds the offset -3"))
    v = g.vertex_labels.copy()
    v[4] = -2
    out.append(("vertex_labels", v, "vertex_labels holds the label -2"))
    e = g.edge_labels.copy()
    e[-1] = -7
    out.append(("edge_labels", e, "edge_labels holds the label -7"))
    return out


@pytest.mark.parametrize("case", range(10))
@pytest.mark.parametrize("verify", [True, False])
def test_structure_is_checked_even_with_valid_checksums(cache, case: int, verify: bool) -> None:
    p, g, good = cache
    name, values, fragment = _bad_structures(g)[case]
    _, meta = _layout(good)
    p.write_bytes(_put_array(bytearray(good), meta, name, values))
    with pytest.raises(InputFormatError, match=fragment) as ei:
        load_binary(p, verify=verify)
    assert str(ei.value).startswith(f"{p}: corrupted: ")


def test_header_inconsistencies_with_a_valid_header_crc(cache) -> None:
    """A header that parses and passes its CRC but describes impossible arrays."""
    p, _, good = cache
    cases = [
        (lambda m: m["arrays"]["indices"].update(shape=[2, 8]), "does not fit"),
        (lambda m: m["arrays"]["indices"].update(offset=0), "does not fit"),
        (lambda m: m["arrays"]["ids"].update(offset=m["arrays"]["indices"]["offset"]),
         "overlaps"),
        (lambda m: m["arrays"]["indices"].update(dtype="<f8"), "unexpected array"),
        (lambda m: m["arrays"].update(x={}), "unexpected array 'x'"),
        (lambda m: m["arrays"]["indices"].pop("crc32"), "has no checksum"),
        (lambda m: m.update(n=7), "indptr has 7 offsets for n=7"),
        (lambda m: m.update(n=-1), "outside the supported"),
        (lambda m: m.update(directed="yes"), "corrupted header"),
        (lambda m: m.update(arrays=[]), "corrupted header"),
        (lambda m: m.update(report={"self_loops": "x"}), "bad build report"),
    ]
    for edit, fragment in cases:
        _, meta = _layout(good)
        edit(meta)
        p.write_bytes(_rewrite_header(bytearray(good), meta))
        with pytest.raises(InputFormatError, match=fragment):
            load_binary(p)
    # an array left out of the table: its bytes become padding, which must be zero ...
    _, meta = _layout(good)
    spec = meta["arrays"].pop("in_indices")
    data = _rewrite_header(bytearray(good), meta)
    with pytest.raises(InputFormatError, match="padding at bytes"):
        p.write_bytes(data)
        load_binary(p)
    # ... and once they are, the directed graph lacks its in-adjacency
    data[spec["offset"]:spec["offset"] + spec["nbytes"]] = bytes(spec["nbytes"])
    p.write_bytes(data)
    with pytest.raises(InputFormatError, match="'in_indices' is missing"):
        load_binary(p)


def test_undirected_cache_with_an_odd_adjacency(tmp_path: Path) -> None:
    g = Graph.from_edges([0, 1], [1, 2])
    p = tmp_path / "u.wmg"
    save_binary(g, p)
    data = bytearray(p.read_bytes())
    _, meta = _layout(data)
    # keep the arrays' sizes: drop one neighbour of vertex 1 and shift the offsets
    data = _put_array(data, meta, "indptr", np.array([0, 1, 2, 3]))
    _, meta = _layout(data)
    meta["arrays"]["indices"]["shape"] = [3]
    meta["arrays"]["indices"]["nbytes"] = 12
    raw = np.array([1, 0, 1], dtype=meta["arrays"]["indices"]["dtype"]).tobytes()
    off = meta["arrays"]["indices"]["offset"]
    data[off:off + 16] = raw + b"\0" * 4
    meta["arrays"]["indices"]["crc32"] = zlib.crc32(raw)
    p.write_bytes(_rewrite_header(data, meta))
    with pytest.raises(InputFormatError, match="odd number of entries"):
        load_binary(p)


def test_check_csr_across_slice_boundaries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny slices: row starts, empty rows and descents that fall on a slice's edge."""
    monkeypatch.setattr(csr_mod, "CHECK_CHUNK", 3)
    g = erdos_renyi(40, 120, seed=3)
    for p_, i_ in ((g.indptr, g.indices), (np.zeros(5, np.int64), np.zeros(0, np.int32))):
        check_csr(p_.size - 1, p_, i_)                        # valid: no false alarm
    ptr = np.array([0, 3, 3, 3, 6], dtype=np.int64)           # empty rows 1 and 2
    check_csr(4, ptr, np.array([1, 2, 3, 0, 1, 2]))
    for pos in range(1, 6):
        if pos == 3:
            continue                                          # a row start: may descend
        idx = np.array([1, 2, 3, 0, 1, 2])
        idx[pos] = idx[pos - 1]
        with pytest.raises(GraphError, match=f"position {pos}"):
            check_csr(4, ptr, idx)


# ------------------------------------------------------------------ versions


def _as_version_1(data: bytes) -> bytearray:
    _, meta = _layout(data)
    for spec in meta["arrays"].values():
        spec.pop("crc32")
    return _rewrite_header(bytearray(data), meta, version=1)


def test_version_1_loads_with_a_warning_and_its_structure_checked(cache, tmp_path) -> None:
    _, g, good = cache
    old = tmp_path / "old.wmg"
    old.write_bytes(_as_version_1(good))
    with pytest.warns(UnverifiedCacheWarning, match="version 1, without checksums"):
        h = load_binary(old)
    assert_same_graph(g, h)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_binary(old, verify=False)                        # asked for no checksums
    # converting rewrites it as the current version, with checksums
    new = tmp_path / "new.wmg"
    with pytest.warns(UnverifiedCacheWarning):
        wm.write_graph(wm.read_graph(old), new)
    assert struct.unpack("<I", new.read_bytes()[8:12])[0] == 2
    assert_same_graph(g, load_binary(new))
    # damage that breaks the structure of a version 1 file is still an error
    _, meta = _layout(good)
    bad = _put_array(bytearray(good), meta, "indices", np.full(g.indices.size, 99))
    old.write_bytes(_as_version_1(bad))
    with pytest.raises(InputFormatError, match="outside"):
        load_binary(old)


def test_damaged_version_field_cannot_skip_the_checksums(cache) -> None:
    p, _, good = cache
    _, meta = _layout(good)
    data = bytearray(good)
    spec = meta["arrays"]["ids"]
    data[spec["offset"]] ^= 1
    data[8:12] = struct.pack("<I", 1)            # claims version 1, keeps its checksums
    p.write_bytes(data)
    with pytest.raises(InputFormatError, match="checksum of array 'ids'"):
        load_binary(p)


# --------------------------------------------------------------- real process


def test_cli_count_on_a_damaged_cache_exits_1_with_one_line(tmp_path: Path) -> None:
    g = erdos_renyi(300, 1500, seed=1)
    p = tmp_path / "g.wmg"
    save_binary(g, p)
    data = bytearray(p.read_bytes())
    _, meta = _layout(data)
    spec = meta["arrays"]["indices"]
    data[spec["offset"] + 4 * 100 + 3] ^= 0x40   # id + 2**30: out of range, as in the report
    p.write_bytes(data)
    res = subprocess.run([sys.executable, "-m", "warpmatch", "count", str(p), "triangle"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 1, res.stderr
    lines = res.stderr.strip().splitlines()
    assert lines == [(f"warpmatch: error: {p}: corrupted: the checksum of array 'indices' "
                      "does not match (the file was damaged after it was written; run "
                      "'warpmatch convert' on its source file again)")]
    assert res.stdout == ""


# ------------------------------------------------------------------- warm-up


def test_count_reports_warm_up_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g = erdos_renyi(60, 200, seed=2)
    p = tmp_path / "g.wmg"
    save_binary(g, p)
    h = wm.read_graph(p)
    monkeypatch.setattr(api, "_WARMED", set())
    first = wm.count_result(h, "triangle", backend="reference")
    second = wm.count_result(h, "triangle", backend="reference")
    assert first.warmup_seconds > 0 and second.warmup_seconds == 0.0
    assert first.count == second.count == wm.count(g, "triangle", backend="reference")
    d = first.as_dict()
    assert d["warmup_seconds"] == round(first.warmup_seconds, 6) and d["seconds"] >= 0

    calls: list[int] = []

    class Hooked:
        name = "hooked"

        def warm_up(self, graph: Graph) -> None:
            calls.append(graph.n)

    assert api.warm_up(Hooked(), h) >= 0 and calls == [h.n]
    assert api.warm_up(Hooked(), h) == 0.0 and calls == [h.n]     # once per process


def test_cli_count_json_has_warmup_seconds(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from warpmatch.cli import cli
    p = tmp_path / "g.wmg"
    save_binary(erdos_renyi(50, 150, seed=4), p)
    res = CliRunner().invoke(cli, ["count", str(p), "triangle", "--backend", "reference",
                                   "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output.strip().splitlines()[-1])
    assert d["warmup_seconds"] >= 0 and d["seconds"] >= 0
