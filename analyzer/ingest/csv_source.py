"""Export CSVs through DuckDB, read as text and streamed into a statement; every unreadable file and
rejected row is reported."""

from __future__ import annotations

import csv
import io
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from analyzer.ingest.database import in_transaction
from analyzer.ingest.model import ReadContext

_counter = itertools.count()


_HEAD_BYTES = 1 << 16


@dataclass(frozen=True)
class _Head:
    """The first bytes of a usable CSV file, read once, and its text encoding."""

    data: bytes
    encoding: str


def _head(path: Path, ctx: ReadContext) -> _Head | None:
    """The file's first 64 KiB and whether they are 'utf-8' or 'latin-1' text; None (with a problem
    reported) for an unusable file."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        ctx.report(
            path, "", "error", f"cannot open the file: {exc.strerror or exc}", "check the path and its permissions"
        )
        return None
    if size == 0:
        ctx.report(path, "", "error", "empty file (0 bytes)", "the profiler wrote nothing here; re-export or ignore")
        return None
    with path.open("rb") as fh:
        head = fh.read(_HEAD_BYTES)
    if b"\x00" in head:
        ctx.report(path, "byte 0", "error", "binary content, not a CSV text file", "replace it with the exported CSV")
        return None
    try:
        head.decode("utf-8")
        return _Head(head, "utf-8")
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 4:
            return _Head(head, "utf-8")  # a multi-byte character cut by the 64 KiB window
        ctx.report(
            path,
            f"byte {exc.start}",
            "warning",
            "not UTF-8 text; read as Latin-1",
            "re-save the file as UTF-8 if names look wrong",
        )
        return _Head(head, "latin-1")


def _column_names(head: _Head) -> dict[str, str]:
    """Column name -> VARCHAR for every header field; repeated names get DuckDB's suffixes (_1, _2, ...)."""
    first_line = head.data.split(b"\n", 1)[0]
    line = first_line.decode(head.encoding, errors="replace").lstrip("\ufeff").rstrip("\r\n")
    try:
        fields = next(csv.reader([line]), []) or [""]
    except csv.Error:  # a stray CR or NUL: not a real header, but name its fields anyway
        fields = line.split(",")
    names: dict[str, str] = {}
    for i, raw in enumerate(fields):
        name = raw.strip() or f"column{i}"
        base, n = name, 0
        while name in names:
            n += 1
            name = f"{base}_{n}"
        names[name] = "VARCHAR"
    return names


def first_data_row(head: bytes, encoding: str) -> list[str]:
    """The cells of the first row after the header in a file's first bytes ([] when there is
    none)."""
    rows = csv.reader(io.StringIO(head.decode(encoding, errors="replace")))
    try:
        next(rows, None)
        return next(rows, [])
    except csv.Error:
        return []


def _usable(paths: tuple[Path, ...] | list[Path], ctx: ReadContext) -> list[tuple[Path, _Head]]:
    """(path, head) of every file that is worth handing to DuckDB; the others are reported."""
    usable = []
    for p in paths:
        head = _head(p, ctx)
        if head is not None:
            usable.append((p, head))
    return usable


@dataclass(frozen=True)
class StreamedFile:
    """One CSV file a statement ran over: how it was read, and the rows the statement reported."""

    path: Path
    encoding: str
    columns: dict[str, str]
    rows: int


def stream_csv(
    con: duckdb.DuckDBPyConnection,
    paths: tuple[Path, ...] | list[Path],
    ctx: ReadContext,
    statement_for: Callable[[Path, list[str], list[str]], str | None],
    params: dict[str, object],
    numeric_for: Callable[[list[str]], list[str]] | None = None,
) -> list[StreamedFile]:
    """Run one statement per file straight over its all-text scan (no text copy is kept).

    ``statement_for(path, header_columns, first_row)`` returns SQL with a ``{scan}`` placeholder for
    the file's rows (columns named as the header, all VARCHAR), or None to skip the file (having
    reported why); ``first_row`` holds the cells of the first data row (e.g. where its times lie).
    Empty, binary or header-less files are reported and skipped; rows that do not fit the header are
    reported by file and line and skipped. Returns the files read.

    ``numeric_for(header_columns)`` names columns that the statement only reads through
    ``sql_values.double``: those are first parsed as DOUBLE by the CSV reader itself (see
    ``_read_numbers``), which gives the same values for a clean file at half the cost.
    """
    done = []
    # Not inside the caller's own transaction: the typed read's BEGIN would abort it.
    typed_read = numeric_for is not None and not in_transaction(con)
    for path, head in _usable(paths, ctx):
        enc = head.encoding
        columns = _column_names(head)
        statement = statement_for(path, list(columns), first_data_row(head.data, enc))
        if statement is not None:
            numeric = numeric_for(list(columns)) if typed_read else []
            rows = _consume(con, path, enc, columns, statement, params, ctx, numeric)
            if rows is not None:
                done.append(StreamedFile(path, enc, columns, rows))
    return done


def select_text(con: duckdb.DuckDBPyConnection, file: StreamedFile, sql: str) -> tuple:
    """The first row of ``sql`` run over a read file's rows as text again (``{scan}`` placeholder);
    rows that do not fit the header are skipped silently (they were reported on the first read)."""
    scan = text_scan(False).replace("encoding=$encoding", "ignore_errors=true, encoding=$encoding")
    args = {"path": str(file.path), "columns": file.columns, "encoding": file.encoding}
    return con.execute(sql.replace("{scan}", scan), args).fetchall()[0]


# Files this large are read by DuckDB's parallel reader first (the serial reader is quicker to start on small ones).
_PARALLEL_FROM_BYTES = 8 << 20
_SERIAL_NEEDED = "does not support null_padding in conjunction with quoted new lines"


def scans_in_parallel(path: Path, ctx: ReadContext) -> bool:
    """Whether ``path`` is read by the parallel reader first: a big file."""
    return path.stat().st_size >= _PARALLEL_FROM_BYTES


def text_scan(parallel: bool, rejects: str = "", numbers: bool = False) -> str:
    """The read_csv call reading one file's rows as text ($path, $columns, $encoding parameters).

    No dialect sniffing (it fails on exactly the files that need reading most: quoted newlines,
    truncated rows, stray quotes); the exporters always write ',' and '"'. Short rows are padded
    with NULLs (real exports have them). With ``rejects``, rows that do not fit the header go to
    that table (and its scan table ``<rejects>_scan``) instead of failing the read. With ``numbers``,
    'N/A' cells are NULL too, as a typed ($columns) column cannot hold them.
    """
    store = f"store_rejects=true, rejects_table='{rejects}', rejects_scan='{rejects}_scan', " if rejects else ""
    nulls = "nullstr=['', 'N/A'], " if numbers else ""
    return (
        f"read_csv($path, delim=',', quote='\"', escape='\"', header=true, columns=$columns, "
        f"auto_detect=false, strict_mode=true, null_padding=true, {nulls}"
        f"parallel={'true' if parallel else 'false'}, {store}encoding=$encoding)"
    )


def _run_scan(
    con: duckdb.DuckDBPyConnection,
    statement: str,
    path: Path,
    encoding: str,
    columns: dict[str, str],
    params: dict[str, object],
    parallel: bool,
) -> tuple[int, str]:
    """(rows the statement reports, the rejects table); raises duckdb.Error when unreadable."""
    rejects = f"_rej_{next(_counter)}"
    numbers = any(t != "VARCHAR" for t in columns.values())
    sql = statement.replace("{scan}", text_scan(parallel, rejects, numbers))
    args = {"path": str(path), "columns": columns, "encoding": encoding, **params}
    return con.execute(sql, args).fetchall()[0][0], rejects


def _read_numbers(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    encoding: str,
    columns: dict[str, str],
    statement: str,
    params: dict[str, object],
    parallel: bool,
) -> tuple[int, str] | None:
    """Run ``statement`` over a scan typing the non-VARCHAR ``columns``, in a transaction that is
    kept only when no row was rejected. Returns (rows, rejects table), or None having changed
    nothing: a cell that is not a number (or any other odd row) sends the file down the all-text
    path, which reads it the usual way, its NULLs and reports included. Never called inside the
    caller's own transaction (``stream_csv`` checks), where this BEGIN would abort it."""
    con.execute("BEGIN TRANSACTION")
    read = None
    try:
        rows, rejects = _run_scan(con, statement, path, encoding, columns, params, parallel)
        if not con.execute(f"SELECT count(*) FROM {rejects}").fetchall()[0][0]:
            read = rows, rejects
    except duckdb.Error:
        pass
    finally:  # whatever happened, the transaction ends here
        if not _end_transaction(con, commit=read is not None):
            read = None
    return read


def _end_transaction(con: duckdb.DuckDBPyConnection, commit: bool) -> bool:
    """COMMIT (when ``commit``) or ROLLBACK the transaction; True when its changes were kept."""
    if commit:
        try:
            con.execute("COMMIT")
            return True
        except duckdb.Error:
            pass  # a COMMIT that fails has rolled back; the ROLLBACK below is then a no-op error
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass
    return False


def _consume(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    encoding: str,
    columns: dict[str, str],
    statement: str,
    params: dict[str, object],
    ctx: ReadContext,
    numeric: list[str],
) -> int | None:
    """Run ``statement`` over one file's scan; report rejected rows, an empty or cut file.

    Returns the rows the statement reports, None when the file cannot be read. The ``numeric``
    columns are parsed as numbers first (``_read_numbers``); else, or when that does not hold, the
    file is read as text. Big files try the parallel reader first and fall back to the serial one
    when DuckDB says it needs it (quoted newlines together with short rows); a failed statement has
    changed nothing.
    """
    parallel = scans_in_parallel(path, ctx)
    typed = {name: "DOUBLE" if name in numeric else kind for name, kind in columns.items()}
    read = None
    if numeric:
        read = _read_numbers(con, path, encoding, typed, statement, params, parallel)
    if read is None:
        read = _read_text(con, path, encoding, columns, statement, params, ctx, parallel)
    if read is None:
        return None
    rows, rejects = read
    ctx.mark_read(path)
    _report_rejects(con, path, rejects, ctx)
    if not rows:
        ctx.report(
            path,
            "line 2",
            "warning",
            "no data rows below the header",
            "the profiler wrote only the header here; re-export if rows were expected",
        )
    elif _ends_mid_row(path):
        ctx.report(
            path,
            f"line {rows + 1}",
            "error",
            "the file ends mid-row (no final line break): the last "
            "row is probably cut short, its missing cells are empty",
            "the export was truncated; re-export it",
        )
    return rows


def _read_text(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    encoding: str,
    columns: dict[str, str],
    statement: str,
    params: dict[str, object],
    ctx: ReadContext,
    parallel: bool,
) -> tuple[int, str] | None:
    """Run ``statement`` over the file's all-text scan: (rows, rejects table), or None having
    reported why the file cannot be read."""
    try:
        try:
            rows, rejects = _run_scan(con, statement, path, encoding, columns, params, parallel)
        except duckdb.Error as exc:
            if not (parallel and _SERIAL_NEEDED in str(exc)):
                raise
            rows, rejects = _run_scan(con, statement, path, encoding, columns, params, False)
    except duckdb.Error as exc:
        lines = [s.strip() for s in str(exc).splitlines() if s.strip()]
        where = re.search(r"[Ll]ine:? (\d+)", lines[0] if lines else "")
        what = "; ".join(lines[:2])[:300]
        ctx.report(
            path,
            f"line {where.group(1)}" if where else "",
            "error",
            f"could not be parsed as CSV: {what}",
            "check that the file is a complete export CSV",
        )
        return None
    return rows, rejects


def _ends_mid_row(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, 2)
        return fh.read(1) not in (b"\n", b"\r")


def _report_rejects(con: duckdb.DuckDBPyConnection, path: Path, rejects: str, ctx: ReadContext) -> None:
    try:
        rows = con.execute(f"SELECT line, error_type, error_message FROM {rejects} ORDER BY line LIMIT 20").fetchall()
        total = con.execute(f"SELECT count(*) FROM {rejects}").fetchall()[0][0]
    except duckdb.Error:
        return
    for line, etype, message in rows:
        first = str(message).splitlines()[0][:200]
        ctx.report(
            path,
            f"line {line}",
            "warning",
            f"row skipped ({etype}): {first}",
            "a row that does not fit the header, e.g. an unescaped comma in an op name",
        )
    if total > len(rows):
        ctx.report(
            path,
            "",
            "warning",
            f"{total - len(rows)} more rows skipped for the same kind of reason",
        )
