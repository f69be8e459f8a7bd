"""Streaming, atomic writers of match tables (Parquet, CSV, NPY) for ``warpmatch match``.

Matches arrive from :func:`warpmatch.match` as int64 batches of shape
(rows, k); a writer appends each batch and never holds more than one, so
listing billions of matches needs memory for one batch only. Parquet and CSV
go through pyarrow (``ParquetWriter``, ``CSVWriter``); NPY is written as the
format's version-1.0 header followed by raw little-endian int64 rows, with a
header whose length is fixed in advance so that the row count, known only at
the end, can be written in place.

Where an output goes (:func:`atomic_path`, :func:`check_output`):

- a regular file (new or existing) is written to a hidden temporary file beside
  it and renamed over it only when complete, so an error or an interrupt never
  leaves a half-written file under the requested name. The new file gets the
  permissions a plain ``open(path, "w")`` would give it: an existing file's
  mode, else ``0o666`` less the umask (the temporary file is created with
  mode 0666 and the kernel applies the umask and default ACLs, so the umask
  is never read or changed). Being a new file, it does not keep an old one's
  owner or its other hard links;
- a symbolic link is written through: the rename happens at the link's
  (final) target, in the target's directory, and the link stays a link. A
  dangling link creates its target, as ``echo > link`` does;
- a special file (``/dev/null``, a FIFO, a terminal, ``/dev/stdout``) is never
  replaced: the command line writes straight into it (no temporary file; the
  reader sees rows as they come), and library callers get a clear error;
- ``-`` (the command line's name for standard output) is not a file at all:
  the command line hands the writers ``stdout`` itself, and does the same for
  ``/dev/stdout`` (:func:`is_stdout`), so that the shell's ``>>`` is honoured.

CSV and JSON lines stream to anything. Parquet (its footer records where
each row group starts) and NPY (its header, rewritten last, holds the row
count) need a target that can seek, so they are refused for ``-``, pipes and
terminals, before any work is done.
"""
from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import struct
from pathlib import Path
from typing import BinaryIO, Iterator, Sequence

import numpy as np

from .errors import WarpmatchError

__all__ = ["atomic_path", "check_output", "is_stdout", "special_file", "MatchWriter",
           "open_match_writer", "output_format", "OUTPUT_FORMATS", "STDOUT", "STREAM_FORMATS",
           "Sink"]

#: extension -> format name
OUTPUT_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".npy": "npy"}

#: the output name that means standard output on the command line
STDOUT = "-"

#: formats written front to back, never seeking: they can go to stdout and pipes
STREAM_FORMATS = ("csv", "jsonl")

#: what a writer writes into: a file path (it opens the file itself) or an open binary stream
Sink = Path | BinaryIO

#: names of open file descriptors: written into, never replaced (see special_file)
_FD_NAMES = ("/dev/stdin", "/dev/stdout", "/dev/stderr")
#: the names of file descriptor 1
_STDOUT_NAMES = ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")

_FORMAT_NAMES = {"parquet": "Parquet", "npy": "NPY", "csv": "CSV", "jsonl": "JSON lines"}
_WHY_SEEK = {"parquet": "its footer records where each row group starts",
             "npy": "its header, written last, holds the row count"}


def output_format(path: str | os.PathLike, fmt: str | None = None) -> str:
    """The output format of ``path``: ``fmt`` if given, else from the extension.

    ``-`` (stdout) and a special file such as ``/dev/null`` or a FIFO whose
    name has no known extension are written as CSV, the format that streams.

    Examples
    --------
    >>> output_format("m.parquet"), output_format("m.CSV"), output_format("x.bin", "npy")
    ('parquet', 'csv', 'npy')
    >>> output_format("-")
    'csv'
    """
    if fmt:
        fmt = fmt.lower()
        if fmt not in set(OUTPUT_FORMATS.values()):
            raise WarpmatchError(f"unknown output format {fmt!r}; use parquet, csv or npy")
        return fmt
    ext = Path(path).suffix.lower()
    if ext in OUTPUT_FORMATS:
        return OUTPUT_FORMATS[ext]
    if is_stdout(path) or special_file(path):
        return "csv"
    raise WarpmatchError(f"cannot tell the output format of {os.fspath(path)!r} from its "
                         "extension; use .parquet, .csv or .npy (or --output-format)")


def is_stdout(path: str | os.PathLike) -> bool:
    """Whether ``path`` names standard output: ``-``, ``/dev/stdout`` or ``/dev/fd/1``.

    Whatever stdout is (a terminal, a pipe, a file the shell opened with
    ``>>``), the command line then writes through its own stdout, which keeps
    the shell's offset and append mode, and moves its summary lines to stderr.
    Only the names count: ``-o /dev/null`` stays a device even when stdout is
    ``/dev/null`` too.

    Examples
    --------
    >>> is_stdout("-"), is_stdout("/dev/stdout"), is_stdout("matches.csv")
    (True, True, False)
    """
    name = os.fspath(path)
    if name == STDOUT:
        return True
    return os.path.abspath(name) in _STDOUT_NAMES


def special_file(path: str | os.PathLike) -> str | None:
    """What kind of special file ``path`` is (following symlinks), or ``None``.

    ``None`` for a regular file, a directory and a path that does not exist.
    A file descriptor's name (``/dev/stderr``, ``/dev/fd/N``, anything under
    ``/proc``) counts as special even when it leads to a regular file (stderr
    redirected to a log): it is a handle on a file somebody else opened, so it
    is written into, never replaced. (``/dev/shm`` and other real directories
    under ``/dev`` hold ordinary files.)

    Examples
    --------
    >>> special_file("/dev/null"), special_file(__file__)
    ('character device', None)
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(mode):
        return None
    if stat.S_ISREG(mode):
        full = os.path.abspath(path)
        if full.startswith(("/proc/", "/dev/fd/")) or full in _FD_NAMES:
            return "name of an open file descriptor"
        return None
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


def _can_seek(path: str | os.PathLike) -> bool:
    """Whether the special file ``path`` can seek (``/dev/null`` can, a pipe or tty cannot)."""
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return True
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        # never opened here: a FIFO's reader would see end-of-file at our close
        return False
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return True          # let the writer's own open report the real problem
    try:
        os.lseek(fd, 0, os.SEEK_CUR)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def check_output(path: str | os.PathLike, fmt: str, option: str = "--output") -> None:
    """Refuse, before any work, a format that cannot be written to ``path``.

    Parquet and NPY seek back while writing, so they cannot go to standard
    output (``-``) or to a special file that cannot seek (a FIFO, a
    terminal); ``/dev/null`` and regular files take any format.

    Parameters
    ----------
    path : str or os.PathLike
        The output as the user named it (``-`` is stdout).
    fmt : str
        ``"parquet"``, ``"npy"``, ``"csv"`` or ``"jsonl"``.
    option : str, optional
        The option named in the message. The default is ``"--output"``.

    Raises
    ------
    WarpmatchError
        Naming the format, the target and a format that would work.

    Examples
    --------
    >>> check_output("-", "csv")
    >>> check_output("-", "parquet")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    warpmatch.errors.WarpmatchError: Parquet cannot be written to standard output (--output -): ...
    """
    if fmt in STREAM_FORMATS:
        return
    name = _FORMAT_NAMES.get(fmt, fmt)
    why = _WHY_SEEK.get(fmt, "it is not written front to back")
    streams = " or ".join(_FORMAT_NAMES[f] for f in STREAM_FORMATS)
    if is_stdout(path):
        raise WarpmatchError(f"{name} cannot be written to standard output ({option} "
                             f"{os.fspath(path)}): "
                             f"{why}, so it needs a file; write to a file, or stream "
                             f"{streams} to stdout")
    kind = special_file(path)
    if kind is not None and not _can_seek(path):
        raise WarpmatchError(f"{name} cannot be written to {os.fspath(path)}, a {kind} that "
                             f"cannot seek: {why}; write to a file, or stream {streams}")


def _resolve(path: Path) -> Path:
    """The file a write to ``path`` lands in: symlinks followed to their final target."""
    if not path.is_symlink():
        return path         # a symlinked directory above is fine: the rename goes through it
    real = Path(os.path.realpath(path))
    if real.is_symlink():         # realpath gave up: a loop of links
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), os.fspath(path))
    return real


def _create_temp(parent: Path, name: str, suffix: str) -> Path:
    """Create an empty, unique, hidden file in ``parent`` with the umask applied.

    ``tempfile.mkstemp`` would create it 0600 whatever the umask; asking the
    kernel for 0666 gives exactly the permissions (umask, default ACLs) of a
    file created by ``open(path, "w")``.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = parent / f".{name}.partial-{secrets.token_hex(4)}{suffix}"
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return tmp
    raise FileExistsError(errno.EEXIST, "no unused temporary name", os.fspath(parent))


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, keep_suffix: bool = True, *,
                special: str = "refuse") -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` on success.

    On any exception (including KeyboardInterrupt) the temporary file is
    removed and ``path`` is left as it was.

    ``path`` may be a symbolic link: the temporary file is made beside the
    link's final target and renamed over the target, so the link stays a
    link. The file ends up with the permissions ``open(path, "w")`` would
    give it: an existing file keeps its mode, a new one gets ``0o666`` less
    the umask (even if the writer replaced the temporary file with a file of
    its own).

    Parameters
    ----------
    path : str or os.PathLike
        The final file.
    keep_suffix : bool, optional
        End the temporary name with ``path``'s suffixes, for writers that choose
        the format (or compression) by extension. The default is ``True``.
    special : {"refuse", "direct"}, optional
        What to do when ``path`` is a special file (a device such as
        ``/dev/null``, a FIFO, a socket): ``"refuse"`` raises
        :class:`~warpmatch.errors.WarpmatchError` (such a file must never be
        replaced by a regular one); ``"direct"`` yields ``path`` itself, for
        writers that stream into it (no temporary file, no rename). The default
        is ``"refuse"``.

    Raises
    ------
    FileNotFoundError
        If the directory of ``path`` (or of its link target) does not exist.
    IsADirectoryError
        If ``path`` is a directory.
    WarpmatchError
        If ``path`` is a special file and ``special="refuse"``.

    Examples
    --------
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text()
    'done'
    """
    if special not in ("refuse", "direct"):
        raise ValueError(f"special must be 'refuse' or 'direct', not {special!r}")
    given = Path(path)
    kind = special_file(given)
    if kind is not None:
        if special == "direct":
            yield given
            return
        raise WarpmatchError(f"{os.fspath(given)} is a {kind}, not a regular file: this output "
                             "is written to a temporary file and renamed into place, which "
                             "would replace it; write to a regular file")
    real = _resolve(given)
    parent = real.parent if str(real.parent) else Path(".")
    if not parent.is_dir():
        via = "" if real == given else f" (where the symlink {os.fspath(given)!r} points)"
        raise FileNotFoundError(f"output directory {os.fspath(parent)!r}{via} does not exist")
    if real.is_dir():
        raise IsADirectoryError(f"{os.fspath(given)!r} is a directory")
    suffix = "".join(given.suffixes) if keep_suffix else ".partial"
    try:
        tmp_path = _create_temp(parent, real.name, suffix)
    except PermissionError as exc:
        # name the file the user asked for, not the hidden temporary one
        raise PermissionError(exc.errno, f"{exc.strerror} (cannot create a file in "
                                         f"{os.fspath(parent)!r})", os.fspath(given)) from None
    try:
        try:
            mode = stat.S_IMODE(os.stat(real).st_mode) & 0o777    # overwritten: keep its mode
        except FileNotFoundError:
            mode = stat.S_IMODE(os.stat(tmp_path).st_mode)        # new: what the umask gave
        yield tmp_path
        # writers that write a file of their own and rename it over ours (the binary
        # cache does) bring mkstemp's 0600; set the mode last, whoever created the file
        os.chmod(tmp_path, mode)
        os.replace(tmp_path, real)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp_path.unlink()
        raise


def _is_stream(sink: Sink) -> bool:
    return not isinstance(sink, (str, os.PathLike))


class MatchWriter:
    """Base class: append (rows, k) int64 batches; ``close()`` finishes the file.

    ``sink`` is a path the writer opens, or an open binary stream (stdout)
    that it writes into, flushes after every batch (a reader downstream sees
    rows as they come) and leaves open.
    """

    def __init__(self, path: Sink, names: Sequence[str]) -> None:
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
            if _is_stream(self.path):
                self.path.flush()  # type: ignore[union-attr]

    def _write(self, batch: np.ndarray) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Finish the file (footer, header)."""
        raise NotImplementedError


class _ArrowWriter(MatchWriter):
    def __init__(self, path: Sink, names: Sequence[str]) -> None:
        super().__init__(path, names)
        import pyarrow as pa
        self._pa = pa
        self.schema = pa.schema([(n, pa.int64()) for n in self.names])
        # pyarrow writes into a Python stream through PythonFile, and leaves it open
        self._sink = pa.PythonFile(path, mode="w") if _is_stream(path) else os.fspath(path)

    def _table(self, batch: np.ndarray):  # -> pyarrow.Table
        cols = [self._pa.array(np.ascontiguousarray(batch[:, j])) for j in range(self.k)]
        return self._pa.Table.from_arrays(cols, schema=self.schema)


class ParquetMatchWriter(_ArrowWriter):
    """One int64 column per query vertex, one row group per batch."""

    def __init__(self, path: Sink, names: Sequence[str]) -> None:
        super().__init__(path, names)
        import pyarrow.parquet as pq
        self._w = pq.ParquetWriter(self._sink, self.schema, compression="zstd")

    def _write(self, batch: np.ndarray) -> None:
        self._w.write_table(self._table(batch))

    def close(self) -> None:
        self._w.close()


class CsvMatchWriter(_ArrowWriter):
    """A header line of query vertex names, then one line per match."""

    def __init__(self, path: Sink, names: Sequence[str]) -> None:
        super().__init__(path, names)
        import pyarrow.csv as pcsv
        self._w = pcsv.CSVWriter(self._sink, self.schema,
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
        if _is_stream(self.path):
            self.path.flush()  # type: ignore[union-attr]


class NpyMatchWriter(MatchWriter):
    """A (rows, k) int64 ``.npy`` array, readable with ``numpy.load`` (also memory-mapped)."""

    # the header is padded to a fixed length that fits any row count < 10**19,
    # so the final shape can be written over the placeholder without moving data
    _MAX_ROWS = 10 ** 19

    def __init__(self, path: Sink, names: Sequence[str]) -> None:
        super().__init__(path, names)
        body = self._dict(self._MAX_ROWS)
        # magic (6) + version (2) + header length (2) + dict + '\n', to a multiple of 64
        self._total = -(-(10 + len(body) + 1) // 64) * 64
        self._fh = open(path, "wb") if not _is_stream(path) else None
        if self._fh is None or not self._fh.seekable():
            # check_output refuses these before the search; this is the library's guard
            if self._fh is not None:
                self._fh.close()
            raise WarpmatchError(f"NPY needs a file that can seek (its header, written last, "
                                 f"holds the row count); {path!r} cannot")
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


def open_match_writer(path: Sink, names: Sequence[str], fmt: str) -> MatchWriter:
    """A writer of format ``fmt`` (``"parquet"``, ``"csv"``, ``"npy"``) at ``path``.

    Parameters
    ----------
    path : pathlib.Path or binary stream
        The file to write (a temporary file from :func:`atomic_path`, or a
        special file), or an open binary stream such as stdout, which is
        flushed after every batch and left open (CSV only: Parquet and NPY
        need to seek, see :func:`check_output`).
    names : sequence of str
        The column names, one per query vertex.
    fmt : str
        ``"parquet"``, ``"csv"`` or ``"npy"``.

    Returns
    -------
    MatchWriter
        Call ``write(batch)`` for each (rows, k) batch, then ``close()``.

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
