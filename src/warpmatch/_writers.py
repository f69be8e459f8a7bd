"""Streaming, atomic writers of match tables (Parquet, CSV, NPY) for ``warpmatch match``.

Matches arrive from :func:`warpmatch.match` as int64 batches of shape
(rows, k); a writer appends each batch and never holds more than one, so
listing billions of matches needs memory for one batch only. Parquet and CSV
go through pyarrow (``ParquetWriter``, ``CSVWriter``); NPY is written as the
format's version-1.0 header followed by raw little-endian int64 rows, with a
header whose length is fixed in advance so that the row count, known only at
the end, can be written in place.

Every output is written to a hidden temporary file beside the target and
renamed over it only when complete (:func:`atomic_path`), so an error or an
interrupt never leaves a half-written file under the requested name.
"""
from __future__ import annotations

import contextlib
import os
import struct
import tempfile
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from .errors import WarpmatchError

__all__ = ["atomic_path", "MatchWriter", "open_match_writer", "output_format", "OUTPUT_FORMATS"]

#: extension -> format name
OUTPUT_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".npy": "npy"}


def output_format(path: str | os.PathLike, fmt: str | None = None) -> str:
    """The output format of ``path``: ``fmt`` if given, else from the extension.

    Examples
    --------
    >>> output_format("m.parquet"), output_format("m.CSV"), output_format("x.bin", "npy")
    ('parquet', 'csv', 'npy')
    """
    if fmt:
        fmt = fmt.lower()
        if fmt not in set(OUTPUT_FORMATS.values()):
            raise WarpmatchError(f"unknown output format {fmt!r}; use parquet, csv or npy")
        return fmt
    ext = Path(path).suffix.lower()
    if ext not in OUTPUT_FORMATS:
        raise WarpmatchError(f"cannot tell the output format of {os.fspath(path)!r} from its "
                             "extension; use .parquet, .csv or .npy (or --output-format)")
    return OUTPUT_FORMATS[ext]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, keep_suffix: bool = True) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` on success.

    On any exception (including KeyboardInterrupt) the temporary file is
    removed and ``path`` is left as it was.

    Parameters
    ----------
    path : str or os.PathLike
        The final file.
    keep_suffix : bool, optional
        End the temporary name with ``path``'s suffixes, for writers that choose
        the format by extension. The default is ``True``.
    """
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise FileNotFoundError(f"output directory {os.fspath(parent)!r} does not exist")
    if path.is_dir():
        raise IsADirectoryError(f"{os.fspath(path)!r} is a directory")
    suffix = "".join(path.suffixes) if keep_suffix else ".partial"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.partial-", suffix=suffix, dir=parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp_path.unlink()
        raise


class MatchWriter:
    """Base class: append (rows, k) int64 batches; ``close()`` finishes the file."""

    def __init__(self, path: Path, names: Sequence[str]) -> None:
        self.path = path
        self.names = [str(n) for n in names]
        self.k = len(self.names)
        self.rows = 0

    def write(self, batch: np.ndarray) -> None:
        """Append a batch of shape (rows, k)."""
        batch = np.asarray(batch)
        if batch.ndim != 2 or batch.shape[1] != self.k:
            raise ValueError(f"expected a (rows, {self.k}) batch, got shape {batch.shape}")
        if batch.shape[0]:
            self._write(batch.astype(np.int64, copy=False))
            self.rows += int(batch.shape[0])

    def _write(self, batch: np.ndarray) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Finish the file (footer, header)."""
        raise NotImplementedError


class _ArrowWriter(MatchWriter):
    def __init__(self, path: Path, names: Sequence[str]) -> None:
        super().__init__(path, names)
        import pyarrow as pa
        self._pa = pa
        self.schema = pa.schema([(n, pa.int64()) for n in self.names])

    def _table(self, batch: np.ndarray):  # -> pyarrow.Table
        cols = [self._pa.array(np.ascontiguousarray(batch[:, j])) for j in range(self.k)]
        return self._pa.Table.from_arrays(cols, schema=self.schema)


class ParquetMatchWriter(_ArrowWriter):
    """One int64 column per query vertex, one row group per batch."""

    def __init__(self, path: Path, names: Sequence[str]) -> None:
        super().__init__(path, names)
        import pyarrow.parquet as pq
        self._w = pq.ParquetWriter(os.fspath(path), self.schema, compression="zstd")

    def _write(self, batch: np.ndarray) -> None:
        self._w.write_table(self._table(batch))

    def close(self) -> None:
        self._w.close()


class CsvMatchWriter(_ArrowWriter):
    """A header line of query vertex names, then one line per match."""

    def __init__(self, path: Path, names: Sequence[str]) -> None:
        super().__init__(path, names)
        import pyarrow.csv as pcsv
        self._w = pcsv.CSVWriter(os.fspath(path), self.schema,
                                 write_options=pcsv.WriteOptions(include_header=True,
                                                                 quoting_header="none"))
        self._wrote = False

    def _write(self, batch: np.ndarray) -> None:
        self._w.write_table(self._table(batch))
        self._wrote = True

    def close(self) -> None:
        if not self._wrote:   # pyarrow writes the header with the first batch
            self._w.write_table(self.schema.empty_table())
        self._w.close()


class NpyMatchWriter(MatchWriter):
    """A (rows, k) int64 ``.npy`` array, readable with ``numpy.load`` (also memory-mapped)."""

    # the header is padded to a fixed length that fits any row count < 10**19,
    # so the final shape can be written over the placeholder without moving data
    _MAX_ROWS = 10 ** 19

    def __init__(self, path: Path, names: Sequence[str]) -> None:
        super().__init__(path, names)
        body = self._dict(self._MAX_ROWS)
        # magic (6) + version (2) + header length (2) + dict + '\n', to a multiple of 64
        self._total = -(-(10 + len(body) + 1) // 64) * 64
        self._fh = open(path, "wb")
        self._fh.write(self._header(0))

    def _dict(self, rows: int) -> bytes:
        return repr({"descr": "<i8", "fortran_order": False,
                     "shape": (rows, self.k)}).encode("latin1")

    def _header(self, rows: int) -> bytes:
        body = self._dict(rows)
        pad = self._total - 10 - len(body) - 1
        return (np.lib.format.magic(1, 0) + struct.pack("<H", self._total - 10)
                + body + b" " * pad + b"\n")

    def _write(self, batch: np.ndarray) -> None:
        self._fh.write(np.ascontiguousarray(batch, dtype="<i8").tobytes())

    def close(self) -> None:
        self._fh.seek(0)
        self._fh.write(self._header(self.rows))
        self._fh.close()


_WRITERS = {"parquet": ParquetMatchWriter, "csv": CsvMatchWriter, "npy": NpyMatchWriter}


def open_match_writer(path: Path, names: Sequence[str], fmt: str) -> MatchWriter:
    """A writer of format ``fmt`` (``"parquet"``, ``"csv"``, ``"npy"``) at ``path``.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> d = tempfile.mkdtemp()
    >>> w = open_match_writer(Path(d) / "m.npy", ["a", "b"], "npy")
    >>> w.write(np.array([[1, 2], [3, 4]])); w.close()
    >>> np.load(Path(d) / "m.npy").tolist()
    [[1, 2], [3, 4]]
    """
    return _WRITERS[fmt](path, names)
