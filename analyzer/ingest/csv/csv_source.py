"""Export CSVs through DuckDB, read as text and streamed into a statement; every unreadable file and
rejected row is reported."""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import duckdb

from analyzer.ingest.csv.csv_cells import CellLines, casts_only, cells_sql, first_lines, mostly_text, report_cells
from analyzer.ingest.csv.csv_rejects import Rejects, count_rejects, report_refusal, report_rejects
from analyzer.ingest.csv.csv_shape import (
    ends_mid_row,
    header_line,
    mixed_line_ends,
    sample_rows,
    short_in_head,
    short_rows,
)
from analyzer.ingest.database import in_transaction
from analyzer.ingest.model import ReadContext
from analyzer.ingest.sql_values import ident

_counter = itertools.count()


_HEAD_BYTES = 1 << 16
_HEADER_LIMIT = 16 << 20
_CR_OR_LF = re.compile(rb"[\r\n]")


@dataclass(frozen=True)
class _Head:
    """The first bytes of a usable CSV file, read once, and its text encoding."""

    data: bytes
    encoding: str


def _two_line_ends(data: bytes) -> bool:
    """Whether ``data`` holds two CR or LF bytes: found from its start, not counted through the whole head."""
    first = _CR_OR_LF.search(data)
    return first is not None and _CR_OR_LF.search(data, first.end()) is not None


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
        # A very wide header goes past the first bytes: read on to its line end (and a row after it).
        while len(head) < _HEADER_LIMIT and not _two_line_ends(head):
            more = fh.read(len(head))
            if not more:
                break
            head += more
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


def _column_names(header: str) -> dict[str, str]:
    """Column name -> VARCHAR for every field of the ``header`` line; repeated names get DuckDB's suffixes
    (_1, _2, ...)."""
    try:
        fields = next(csv.reader([header]), []) or [""]
    except csv.Error:  # a stray CR or NUL: not a real header, but name its fields anyway
        fields = header.split(",")
    names: dict[str, str] = {}
    for i, raw in enumerate(fields):
        name = raw.strip() or f"column{i}"
        base, n = name, 0
        while name in names:
            n += 1
            name = f"{base}_{n}"
        names[name] = "VARCHAR"
    return names


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
    strict: bool = True


@dataclass(frozen=True)
class CsvFile:
    """One file about to be read: where, its encoding, header line, columns and first data row's cells,
    and the parser mode."""

    path: Path
    encoding: str
    header: str
    columns: dict[str, str]
    first_row: list[str]
    strict: bool

    def lenient(self) -> CsvFile:
        """The same file read by the lenient parser (mixed line ends)."""
        return replace(self, strict=False)


@dataclass(frozen=True)
class _Statement:
    """One statement run over a file's scan: the connection, the SQL with its ``{scan}`` placeholder, its
    parameters, and the context problems go to."""

    con: duckdb.DuckDBPyConnection
    sql: str
    params: dict[str, object]
    ctx: ReadContext


def stream_csv(
    con: duckdb.DuckDBPyConnection,
    paths: tuple[Path, ...] | list[Path],
    ctx: ReadContext,
    statement_for: Callable[[Path, list[str], list[str]], str | None],
    params: dict[str, object],
    types_for: Callable[[list[str]], dict[str, str]] | None = None,
) -> list[StreamedFile]:
    """Run one statement per file straight over its scan (no text copy is kept).

    ``statement_for(path, header_columns, first_row)`` returns SQL with a ``{scan}`` placeholder for
    the file's rows (columns named as the header), or None to skip the file (having reported why);
    ``first_row`` holds the cells of the first data row (e.g. where its times lie). Empty, binary or
    header-less files are reported and skipped, and so is a file whose header names more columns than
    its rows hold (every value would be read under its neighbour's name).

    ``types_for(header_columns)`` gives the SQL type (DOUBLE, HUGEINT, DECIMAL(38,3)) of the columns
    the statement reads as numbers: the CSV reader parses them itself, which validates the data
    against its header. A row that does not fit (text in a number column, more cells than the
    header, a repeated header row) is left out and reported by line and column; beyond a small
    share of such rows the file is refused (``csv_rejects``). Returns the files read.
    """
    done = []
    # Not inside the caller's own transaction: the typed read's BEGIN would abort it.
    typed_read = types_for is not None and not in_transaction(con)
    for path, head in _usable(paths, ctx):
        file = _open(path, head, ctx)
        if file is None:
            continue
        sql = statement_for(path, list(file.columns), file.first_row)
        if sql is not None:
            types = types_for(list(file.columns)) if typed_read and types_for is not None else {}
            rows = _consume(_Statement(con, sql, params, ctx), file, types)
            if rows is not None:
                done.append(StreamedFile(path, file.encoding, file.columns, rows, file.strict))
    return done


def probe(path: Path, ctx: ReadContext, first_row: bool = True) -> CsvFile | None:
    """How ``stream_csv`` would read the file (encoding, header, columns, first row, parser mode); None,
    with the same problem reported, for a file it would skip before reading. ``first_row=False``: the same
    answer with an empty first row, the head parsed only as far as the check of its width needs."""
    head = _head(path, ctx)
    return None if head is None else _open(path, head, ctx, first_row)


def _open(path: Path, head: _Head, ctx: ReadContext, first_row: bool = True) -> CsvFile | None:
    """The file's header and parser mode; None (reported) when its header does not fit its rows."""
    header = header_line(head.data, head.encoding)
    columns = _column_names(header)
    if first_row:
        rows = sample_rows(head.data, head.encoding)
        widest = short_rows(list(columns), rows)
    else:
        rows, widest = [], short_in_head(len(columns), head.data, head.encoding)
    if widest is not None:
        ctx.report(
            path,
            "line 2",
            "error",
            f"the header names {len(columns)} columns but the rows hold {widest} cells: every value would "
            f"be read under the wrong column; file skipped. Header: {header[:300]}",
            "a column was added to the header only (a hand-edited or mis-merged file); re-export it",
        )
        return None
    return CsvFile(path, head.encoding, header, columns, rows[0] if rows else [], not mixed_line_ends(head.data))


def select_text(con: duckdb.DuckDBPyConnection, file: StreamedFile, sql: str) -> tuple:
    """The first row of ``sql`` run over a read file's rows as text again (``{scan}`` placeholder);
    rows that do not fit the header are skipped silently (they were reported on the first read)."""
    scan = text_scan(False, strict=file.strict, ignore_errors=True)
    args = {"path": str(file.path), "columns": file.columns, "encoding": file.encoding}
    return con.execute(sql.replace("{scan}", scan), args).fetchall()[0]


# Files this large are read by DuckDB's parallel reader first (the serial reader is quicker to start on small ones).
_PARALLEL_FROM_BYTES = 8 << 20
_SERIAL_NEEDED = "does not support null_padding in conjunction with quoted new lines"
# DuckDB's strict parser stops here on mixed LF / CRLF line ends (past the first bytes); the lenient
# one reads them as line ends.
_LENIENT_NEEDED = "state machine reached an invalid state"


def scans_in_parallel(path: Path) -> bool:
    """Whether ``path`` is read by the parallel reader first: a big file."""
    return path.stat().st_size >= _PARALLEL_FROM_BYTES


def text_scan(
    parallel: bool,
    rejects: str = "",
    numbers: bool = False,
    strict: bool = True,
    ignore_errors: bool = False,
    header: bool = True,
) -> str:
    """The read_csv call reading one file's rows ($path, $columns, $encoding parameters).

    No dialect sniffing (it fails on exactly the files that need reading most: quoted newlines,
    truncated rows, stray quotes); the exporters always write ',' and '"'. Short rows are padded
    with NULLs (real exports have them). With ``rejects``, rows that do not fit the header go to
    that table (and its scan table ``<rejects>_scan``) instead of failing the read. With ``numbers``,
    'N/A' cells (with or without the exporters' trailing TAB) are NULL too, as a typed ($columns) column
    cannot hold them. ``strict=False`` reads
    mixed line ends. ``ignore_errors`` skips rows that do not fit the header without a trace. ``header=False``: the file
    has no header line (``$columns`` names every column, ``csv_joined``).
    """
    store = f"store_rejects=true, rejects_table='{rejects}', rejects_scan='{rejects}_scan', " if rejects else ""
    nulls = "nullstr=['', 'N/A', 'N/A\t', '\t', ' '], " if numbers else ""
    skip = "ignore_errors=true, " if ignore_errors else ""
    return (
        f"read_csv($path, delim=',', quote='\"', escape='\"', header={str(header).lower()}, columns=$columns, "
        f"auto_detect=false, strict_mode={'true' if strict else 'false'}, null_padding=true, {nulls}"
        f"parallel={'true' if parallel else 'false'}, {store}{skip}encoding=$encoding)"
    )


def _run_scan(statement: _Statement, file: CsvFile, columns: dict[str, str], parallel: bool) -> tuple[int, str]:
    """(rows the statement reports, the rejects table); raises duckdb.Error when unreadable."""
    rejects = f"_rej_{next(_counter)}"
    sql = statement.sql.replace("{scan}", checked_scan(columns, rejects, file.strict, parallel))
    args = {"path": str(file.path), "columns": columns, "encoding": file.encoding, **statement.params}
    return statement.con.execute(sql, args).fetchall()[0][0], rejects


def checked_scan(
    columns: dict[str, str], rejects: str, strict: bool, parallel: bool, header: bool = True, select: str = "*"
) -> str:
    """``text_scan`` typing ``columns`` (parameters $path, $columns, $encoding), rejects kept in ``rejects``;
    when every column is text, rows repeating the header are left out (they would pass for data). ``select``:
    the scan's select list (it may name the reader's ``file_index``: the row's file in the list ``$path``)."""
    numbers = any(t != "VARCHAR" for t in columns.values())
    scan = text_scan(parallel, rejects, numbers, strict, header=header)
    if not numbers:
        return f"(SELECT {select} FROM {scan} WHERE {_repeats_header(columns)})"
    return scan if select == "*" else f"(SELECT {select} FROM {scan})"


def _repeats_header(columns: dict[str, str]) -> str:
    """SQL true for a row that is not a copy of the header (its first two cells are the header's names)."""
    names = list(columns)[:2]
    same = " AND ".join(f"{ident(n)} IS NOT DISTINCT FROM {_literal(n)}" for n in names)
    return f"NOT ({same})"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _read_typed(
    statement: _Statement, file: CsvFile, typed: dict[str, str], parallel: bool
) -> tuple[int, Rejects] | Literal["refused"] | CellLines | None:
    """Run ``statement`` over a scan typing the ``typed`` columns, in a transaction kept unless the
    file is refused. Returns (rows, rejects), "refused" (reported), CellLines having changed nothing when
    only cells failed their type (the file is then read as text, csv_cells.py), or None having changed nothing
    when DuckDB cannot parse the file this way (it then goes down the all-text path). Never called
    inside the caller's own transaction (``stream_csv`` checks), where this BEGIN would abort it."""
    con = statement.con
    con.execute("BEGIN TRANSACTION")
    read: tuple[int, Rejects] | Literal["refused"] | CellLines | None = None
    try:
        try:
            rows, table = _run_scan(statement, file, typed, parallel)
        except duckdb.Error as exc:
            if not (file.strict and _LENIENT_NEEDED in str(exc)):
                raise
            con.execute("ROLLBACK")
            con.execute("BEGIN TRANSACTION")
            file = file.lenient()
            rows, table = _run_scan(statement, file, typed, False)
        rejects = count_rejects(con, table, file.header)
        if rejects.misfits and (lines := _cell_level(con, table, file, typed)) is not None:
            read = lines  # cell-level problems: the file is read as text instead (csv_cells.py)
        elif rejects.refuses(rows):
            report_refusal(con, file.path, rejects, rows, file.header, statement.ctx)
            read = "refused"
        else:
            read = rows, rejects
    except duckdb.Error:
        pass
    finally:  # whatever happened, the transaction ends here
        if not _end_transaction(con, commit=isinstance(read, tuple)) and isinstance(read, tuple):
            read = None
    return read


def _cell_level(con: duckdb.DuckDBPyConnection, rejects: str, file: CsvFile, typed: dict[str, str]) -> CellLines | None:
    """When the rows the typed read rejected only hold cells that are no numbers (csv_cells.py), rather
    than shifted cells or a header that does not describe the data: the first line of each such column."""
    if not casts_only(con, rejects, len(file.columns)):
        return None
    numbers = {c: t for c, t in typed.items() if t != "VARCHAR"}
    if mostly_text(numbers, _cell_counts(con, file, numbers)) is not None:
        return None
    return CellLines(first_lines(con, rejects))


def _cell_counts(con: duckdb.DuckDBPyConnection, file: CsvFile, numbers: dict[str, str]) -> tuple:
    """csv_cells.cells_sql over the file read as text."""
    return select_text(con, StreamedFile(file.path, file.encoding, file.columns, 0, file.strict), cells_sql(numbers))


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


def _read(statement: _Statement, file: CsvFile, types: dict[str, str], parallel: bool) -> tuple[int, Rejects] | None:
    """(rows, rejects) of ``statement`` over the file: typed first (``types``), else as text; a typed read
    that met only cells of the wrong type reads as text and names them per column (csv_cells.py)."""
    cells: CellLines | None = None
    if types:
        typed = {name: types.get(name, kind) for name, kind in file.columns.items()}
        read = _read_typed(statement, file, typed, parallel)
        if read == "refused":
            return None
        if isinstance(read, tuple):
            return read
        cells = read  # CellLines, or None (not parseable this way)
    read = _read_text(statement, file, parallel)
    if read is not None and cells:
        numbers = {c: t for c, t in types.items() if c in file.columns and t != "VARCHAR"}
        report_cells(file.path, numbers, _cell_counts(statement.con, file, numbers), cells.lines, statement.ctx)
    return read


def _consume(statement: _Statement, file: CsvFile, types: dict[str, str]) -> int | None:
    """Run ``statement`` over one file's scan; report rejected rows, an empty or cut file.

    Returns the rows the statement reports, None when the file cannot be read. The ``types``
    columns are parsed as numbers first (``_read_typed``); else, or when DuckDB cannot parse the file
    that way, it is read as text. Big files try the parallel reader first and fall back to the serial
    one when DuckDB says it needs it (quoted newlines together with short rows); a failed statement
    has changed nothing.
    """
    path, ctx = file.path, statement.ctx
    read = _read(statement, file, types, scans_in_parallel(path))
    if read is None:
        return None
    rows, rejects = read
    ctx.mark_read(path)
    report_rejects(statement.con, path, rejects, file.header, ctx)
    if not rows:
        ctx.report(
            path,
            "line 2",
            "warning",
            "no data rows below the header",
            "the profiler wrote only the header here; re-export if rows were expected",
        )
    elif ends_mid_row(path, file.encoding, len(file.columns)):
        ctx.report(
            path,
            f"line {rows + 1}",
            "error",
            "the file ends mid-row (no final line break, fewer cells than the header): the last "
            "row is probably cut short, its missing cells are empty",
            "the export was truncated; re-export it",
        )
    return rows


def _read_text(statement: _Statement, file: CsvFile, parallel: bool) -> tuple[int, Rejects] | None:
    """Run ``statement`` over the file's all-text scan: (rows, rejects), or None having reported why
    the file cannot be read."""
    try:
        try:
            rows, table = _run_scan(statement, file, file.columns, parallel)
        except duckdb.Error as exc:
            if parallel and _SERIAL_NEEDED in str(exc):
                rows, table = _run_scan(statement, file, file.columns, False)
            elif file.strict and _LENIENT_NEEDED in str(exc):
                file = file.lenient()
                rows, table = _run_scan(statement, file, file.columns, False)
            else:
                raise
    except duckdb.Error as exc:
        lines = [s.strip() for s in str(exc).splitlines() if s.strip()]
        where = re.search(r"[Ll]ine:? (\d+)", lines[0] if lines else "")
        what = "; ".join(lines[:2])[:300]
        statement.ctx.report(
            file.path,
            f"line {where.group(1)}" if where else "",
            "error",
            f"could not be parsed as CSV: {what}",
            "check that the file is a complete export CSV",
        )
        return None
    return rows, count_rejects(statement.con, table, file.header)
