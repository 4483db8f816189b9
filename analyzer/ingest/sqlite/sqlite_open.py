"""Open an Ascend SQLite export strictly read-only and stage its tables in DuckDB as Arrow tables.

The exports are in WAL mode; a plain read-only open still creates ``-wal``/``-shm`` files beside
them. ``file:...?mode=ro&immutable=1`` makes SQLite treat the file as unchangeable: no side file,
no lock. Rows leave SQLite in large batches and become Arrow columns; every join, decode and
pivot then happens in DuckDB (sqlite_arrow.py fetches them). Each staged database gets its own prefix for its temporary
tables (``_sq<N>_<TABLE>``). A column of ``STRING_IDS`` ids is decoded once, on its first use, into
a text column added to its staged table (``"<column>#text"``), which queries read like any
column: a lookup subquery per use would cost each use a join (and its hash table).
"""

from __future__ import annotations

import itertools
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import duckdb
import pyarrow as pa

from analyzer.errors import TriageError
from analyzer.ingest.model import ReadContext
from analyzer.ingest.sqlite.sqlite_arrow import ROWID, ArrowConnection, fetch_arrow

__all__ = ["ROWID", "StagedDb", "UnusableDb", "open_readonly", "stage_tables", "table_names"]

SQLITE_MAGIC = b"SQLite format 3\x00"
_counter = itertools.count()


class UnusableDb(TriageError):
    """The file cannot be read as SQLite at all; the message says why, for the user."""


def table_names(conn: sqlite3.Connection) -> set[str]:
    """The names of the tables of an open SQLite database."""
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


@contextmanager
def open_readonly(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only SQLite connection to the export that never writes beside the file.

    A database with a ``-wal`` file beside it holds rows that are only in that file (not checkpointed):
    the pair is copied into a private temporary folder, opened there with its WAL, and the copy removed
    afterwards (a WAL gone before it is copied was checkpointed by its writer closing: the database is copied
    again, with its rows). Without one, the file itself is opened immutable (no side file, no lock).
    Raises UnusableDb for a missing, empty, non-SQLite or unreadable file.
    """
    try:
        with path.open("rb") as fh:
            head = fh.read(100)
    except OSError as exc:
        raise UnusableDb(f"cannot open the file: {exc.strerror or exc}") from exc
    if not head:
        raise UnusableDb("empty file (0 bytes)")
    if not head.startswith(SQLITE_MAGIC):
        raise UnusableDb("not an SQLite database (the first 16 bytes are not 'SQLite format 3')")
    wal = path.with_name(path.name + "-wal")
    if wal.is_file() and wal.stat().st_size:
        with tempfile.TemporaryDirectory(prefix="npu-triage-wal-") as private:
            copy = Path(private) / path.name
            try:
                shutil.copyfile(path, copy)
                try:
                    shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
                except FileNotFoundError:  # its writer closed meanwhile: the WAL's rows are in the database now
                    shutil.copyfile(path, copy)
            except OSError as exc:
                raise UnusableDb(f"cannot copy the database and its -wal file to read them: {exc}") from exc
            conn = _connect(f"file:{quote(str(copy))}?mode=ro")
            try:
                yield conn
            finally:
                conn.close()
        return
    conn = _connect(f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1")
    try:
        yield conn
    finally:
        conn.close()


def _connect(uri: str) -> ArrowConnection:
    try:
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False, factory=ArrowConnection)
        conn.uri = uri  # its large tables are fetched by a second reader of the same file (sqlite_arrow.py)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise UnusableDb(f"SQLite cannot read it: {exc}") from exc
    return conn


def _clean(raw: str) -> str:
    """SQL of a text value with surrounding blanks trimmed and 'N/A' or '' as NULL."""
    return f"NULLIF(NULLIF(trim({raw}), 'N/A'), '')"


@dataclass
class StagedDb:
    """The tables of one SQLite export, staged as DuckDB temp tables, with their column names."""

    con: duckdb.DuckDBPyConnection
    path: Path
    prefix: str
    tables: dict[str, list[str]] = field(default_factory=dict)  # SQLite name -> columns
    text_columns: dict[str, set[str]] = field(default_factory=dict)  # columns already text
    scratch: list[str] = field(default_factory=list)  # work tables to drop at the end
    decoded_columns: dict[str, set[str]] = field(default_factory=dict)  # columns added by decoded()
    id_columns: set[tuple[str, str]] = field(default_factory=set)  # (table, column) holding STRING_IDS ids
    present: set[str] = field(default_factory=set)  # every table of the file, staged or not (table_names)
    device_count: int | None = None  # devices of TASK, once asked (sqlite_sql.several_devices)

    def work_table(self, suffix: str) -> str:
        """Name of a temporary work table of this database, dropped with it."""
        name = f"{self.prefix}_{suffix}"
        if name not in self.scratch:
            self.scratch.append(name)
        return name

    def has(self, table: str, *columns: str) -> bool:
        return table in self.tables and all(c in self.tables[table] for c in columns)

    def name(self, table: str) -> str:
        """DuckDB name of a staged table."""
        return f"{self.prefix}_{table}"

    def first_column(self, table: str, *candidates: str) -> str | None:
        return next((c for c in candidates if c in self.tables.get(table, ())), None)

    def text(self, alias: str, table: str, column: str) -> str:
        """SQL for a text column: STRING_IDS decoded (unless already text), 'N/A' and '' -> NULL."""
        if self._is_text(table, column):
            raw = f'CAST({alias}."{column}" AS VARCHAR)'
            if (table, column) in self.id_columns and self.has("STRING_IDS"):
                # ids stored as text beside other text: decode the ids, keep the text
                return _clean(f'coalesce({alias}."{self.decoded(table, column)}", {raw})')
            return _clean(raw)
        return _clean(f'{alias}."{self.decoded(table, column)}"')

    def distinct_text(self, table: str, column: str) -> str:
        """A subquery: each distinct non-NULL value of a column (``key``) with its text (``text``).

        Decodes only the distinct values: for a long column of few names, such as PMU metrics.
        """
        keys = f'(SELECT DISTINCT "{column}" AS key FROM "{self.name(table)}" WHERE "{column}" IS NOT NULL) k'
        if self._is_text(table, column):
            return f"(SELECT key, {_clean('CAST(key AS VARCHAR)')} AS text FROM {keys})"
        return f'(SELECT key, {_clean("s.value")} AS text FROM {keys} LEFT JOIN "{self.strings()}" s ON s.id = k.key)'

    def _is_text(self, table: str, column: str) -> bool:
        """The column holds its text itself (no STRING_IDS to decode it through)."""
        return column in self.text_columns.get(table, set()) or not self.has("STRING_IDS")

    def decoded(self, table: str, column: str) -> str:
        """Name of a VARCHAR column of the staged table: ``column`` decoded through STRING_IDS.

        Added and filled (one join with STRING_IDS) the first time it is asked for.
        """
        target = f"{column}#text"
        if target in self.decoded_columns.setdefault(table, set()):
            return target
        staged = f'"{self.name(table)}"'
        self.con.execute(f'ALTER TABLE {staged} ADD COLUMN IF NOT EXISTS "{target}" VARCHAR')
        self.con.execute(
            f'UPDATE {staged} SET "{target}" = s.value FROM "{self.strings()}" s '
            f'WHERE s.id = TRY_CAST({staged}."{column}" AS BIGINT)'
        )
        self.decoded_columns[table].add(target)
        return target

    def strings(self) -> str:
        """Name of a work table of STRING_IDS with one row per id (its value as VARCHAR)."""
        name = f"{self.prefix}_strings"
        if name not in self.scratch:
            self.con.execute(
                f'CREATE OR REPLACE TEMP TABLE "{name}" AS SELECT id, '
                f"CAST(any_value(value) AS VARCHAR) AS value "
                f'FROM "{self.name("STRING_IDS")}" WHERE id IS NOT NULL GROUP BY id'
            )
            self.scratch.append(name)
        return name

    def drop(self) -> None:
        for name in [self.name(t) for t in self.tables] + self.scratch:
            self.con.execute(f'DROP TABLE IF EXISTS "{name}"')


def stage_tables(
    con: duckdb.DuckDBPyConnection,
    conn: sqlite3.Connection,
    path: Path,
    wanted: tuple[str, ...],
    ctx: ReadContext,
    usable_rows: Callable[[sqlite3.Connection, Path, str, list[str], ReadContext], str] | None = None,
) -> StagedDb:
    """Copy the wanted tables that exist into DuckDB; leftovers named '_...' are ignored.

    A table SQLite cannot read (corrupt page, truncated file) is reported and left out.
    ``usable_rows(conn, path, table, columns, ctx)`` gives the SQLite condition of the rows to copy
    (reporting the others), '' for all.
    """
    staged = StagedDb(con, path, f"_sq{next(_counter)}", present=table_names(conn))
    present = staged.present
    for table in wanted:
        if table not in present or table.startswith("_"):
            continue
        try:
            columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
            arrow = fetch_arrow(conn, table, usable_rows(conn, path, table, columns, ctx) if usable_rows else "")
        except sqlite3.Error as exc:
            ctx.report(
                path,
                f"table {table}",
                "error",
                f"SQLite cannot read this table: {exc}",
                "the file is damaged or truncated; this table is skipped, the rest is used",
            )
            continue
        con.register("_sq_arrow", arrow)
        try:
            con.execute(f'CREATE TEMP TABLE "{staged.name(table)}" AS SELECT * FROM _sq_arrow')
        finally:
            con.unregister("_sq_arrow")
        staged.tables[table] = list(arrow.column_names)
        staged.text_columns[table] = {f.name for f in arrow.schema if pa.types.is_string(f.type)}
    return staged
