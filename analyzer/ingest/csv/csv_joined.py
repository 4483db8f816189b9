"""Many small CSV files of one header read as one: their data lines, each led by its file's number, written
into one temporary file that DuckDB scans once (a scan of a list of files costs more per file than a small
file's rows do).

Only files whose lines are their rows go this way (no blank line, one line end throughout, the header on its
own line). A file whose rows came out fewer or more than its lines (a quoted line break), or a scan that
fails (a row that does not fit, a cell that is no number), undoes the whole insert, and the caller reads
the files the usual way (``csv_group``), which says what it says today.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import duckdb

# Runs the kind's statement over the joined file (and the runs of its file numbers, in order); counts runs' rows.
Run = Callable[[str, list[str]], None]
RowsOf = Callable[[list[str]], dict[str, int]]
# The encodings the probe names (csv_source._head): both keep a line end one byte, whatever the text.
_JOINABLE = frozenset({"utf-8", "latin-1"})


def joined_lines(path: Path, number: int) -> tuple[bytes, int] | None:
    """The file's data lines, each led by ``number,`` and ended as the file ends its lines, and how many there
    are; None when its lines might not be its rows."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    cut = data.find(b"\n")
    if cut < 0 or b'"' in data[:cut]:
        return None
    body = data[cut + 1 :]
    crlf = data[cut - 1 : cut] == b"\r"
    end = b"\r\n" if crlf else b"\n"
    if body and not body.endswith(b"\n"):
        body += end
    lines = body.count(b"\n")
    ends = body.count(b"\r\n") if crlf else 0
    lone_cr = b"\r" in body and body.count(b"\r") != ends  # the count only of a file holding a CR (few do)
    if lone_cr or ends != (lines if crlf else 0) or body.startswith(end) or end + end in body:
        return None
    lead = b"%d," % number
    return (lead + body[:-1].replace(b"\n", b"\n" + lead) + b"\n" if body else b""), lines


@dataclass(frozen=True)
class Joined:
    """A joined file written ahead of its insert (``write_joined``): its path, and the line count of each file
    written into it by position in the files given (a file whose lines might not be its rows has none)."""

    path: str
    lines: dict[int, int]


def write_joined(paths: list[Path], encoding: str) -> Joined | None:
    """The joined lines of ``paths`` written into a new temporary file (Python work only, no connection, so
    that it may run beside the connection's work); None, leaving nothing behind, when the encoding cannot be
    joined or no temporary file can be written."""
    if encoding not in _JOINABLE:
        return None
    try:
        fd, joined = tempfile.mkstemp(prefix="npu-triage-joined-", suffix=".csv")
    except OSError:  # no temporary folder to write in: the usual way needs none
        return None
    try:
        with os.fdopen(fd, "wb") as fh:
            lines = _write_lines(fh, paths)
    except OSError:  # the temporary folder is full
        remove_joined(joined)
        return None
    except BaseException:  # the read stops: nothing is left behind
        remove_joined(joined)
        raise
    return Joined(joined, lines)


def remove_joined(path: str) -> None:
    """The joined file at ``path`` removed, if it is still there."""
    with contextlib.suppress(OSError):
        os.unlink(path)


def insert_joined(
    con: duckdb.DuckDBPyConnection,
    run: Run,
    files: list[tuple[str, Path]],
    encoding: str,
    rows_of: RowsOf,
    written: Joined | None = None,
) -> tuple[set[str], list[int]] | None:
    """Insert the rows of ``files`` ((run, path), one per run) through ``run(path, runs)`` (it runs the
    kind's statement over the joined file, whose first column is each row's file number, and ``runs``
    lists the runs of those numbers from 0); ``rows_of(runs)``: those runs' rows in the kind's table;
    ``written``: the files' joined file when ``write_joined`` wrote it already (removed here). Returns the runs
    whose file gave no rows (the careful path's) and the positions in ``files`` of the files left out (whose
    lines might not be their rows), or None having changed nothing when every file must be read the usual way."""
    joined = written or write_joined([path for _, path in files], encoding)
    if joined is None:
        return None
    try:
        taken = [(files[n][0], count) for n, count in joined.lines.items()]
        careful = _insert(con, run, taken, joined.path, rows_of) if len(taken) > 1 else None
        return None if careful is None else (careful, [n for n in range(len(files)) if n not in joined.lines])
    except OSError:  # the temporary folder is full
        return None
    finally:
        remove_joined(joined.path)


def _write_lines(fh: BinaryIO, paths: list[Path]) -> dict[int, int]:
    """Each file's ``joined_lines`` written to ``fh`` one file at a time (a file's bytes are held only while
    it is written), numbered in the order written; the line count of each file written, by position in
    ``paths`` (a file whose lines might not be its rows is left out)."""
    counts: dict[int, int] = {}
    for n, path in enumerate(paths):
        part = joined_lines(path, len(counts))
        if part is not None:
            fh.write(part[0])
            counts[n] = part[1]
    return counts


def _insert(
    con: duckdb.DuckDBPyConnection, run: Run, taken: list[tuple[str, int]], joined: str, rows_of: RowsOf
) -> set[str] | None:
    """The insert of ``taken`` ((run, lines), in the joined file's order) in a transaction kept only when
    every file gave as many rows as it has lines: the runs whose file gave none, else None."""
    runs = [r for r, _ in taken]
    before = rows_of(runs)
    kept = False
    con.execute("BEGIN TRANSACTION")
    try:
        run(joined, runs)
        after = rows_of(runs)
        kept = all(after.get(r, 0) - before.get(r, 0) == n for r, n in taken)
    except duckdb.Error:
        pass  # the files are read the usual way, which says what they hold
    finally:
        con.execute("COMMIT" if kept else "ROLLBACK")
    return {r for r, n in taken if n == 0} if kept else None
