"""Create the normalized tables in a DuckDB connection, and copy them to a DuckDB file or Parquet."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from analyzer.atomic_files import atomic_path, output_error
from analyzer.duckdb_connect import connect_offline
from analyzer.ingest.schema import TABLES, ddl
from analyzer.ingest.sql_values import in_list

if TYPE_CHECKING:  # a single export's reading never loads pyarrow (tests/test_cli_imports.py)
    import pyarrow as pa


def connect(limit_bytes: int | None = None, threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection (``duckdb_connect``: memory limit ``limit_bytes``, else the
    process's; ``threads``, else the process's count; a private spill folder) holding every normalized table,
    empty."""
    con = connect_offline(limit_bytes=limit_bytes, threads=threads)
    create_tables(con)
    return con


def create_tables(con: duckdb.DuckDBPyConnection, schema: str | None = None) -> None:
    """CREATE every normalized table, in ``schema`` (an attached database file) when given: one call
    for all (one statement each), which spares a round trip per table on every new connection."""
    con.execute(";\n".join(ddl(name, f"{schema}.{name}" if schema else name) for name in TABLES))


def append_rows(con: duckdb.DuckDBPyConnection, table: str, select_sql: str, params: object = None) -> None:
    """INSERT BY NAME the rows of a SELECT holding a normalized table's columns (run_id among them)
    into that table of the working connection."""
    con.execute(f"INSERT INTO {table} BY NAME {select_sql}", params)


def insert_tables(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table]) -> None:
    """Append each Arrow table to the table of its name (BY NAME), in the caller's transaction, as one chunk:
    DuckDB scans an Arrow table chunk by chunk, and a chunk per run or file costs more than its rows."""
    for name, table in tables.items():
        con.register("_incoming", table.combine_chunks())
        con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _incoming")
        con.unregister("_incoming")  # (left registered when the insert fails: its error is the one to raise)


def in_transaction(con: duckdb.DuckDBPyConnection) -> bool:
    """True inside an explicit transaction, where statements share one transaction id (each
    auto-committed statement gets its own). Other connections do not see its changes yet."""
    ids = [con.execute("SELECT txid_current()").fetchall()[0][0] for _ in range(2)]
    return ids[0] == ids[1]


@contextmanager
def all_or_nothing(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The block's statements in one transaction: the caller's when it holds one (which a failure aborts),
    else one of their own, rolled back when the block fails."""
    if in_transaction(con):
        yield
        return
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:  # no transaction left to end (an interrupted one): the block's error is the one to raise
            pass
        raise
    con.execute("COMMIT")


def save_duckdb(con: duckdb.DuckDBPyConnection, db_path: Path, run_ids: list[str]) -> None:
    """Write the runs' rows into a DuckDB file, replacing earlier rows of the same runs (idempotent).

    One transaction: a failure (a full disk) leaves an existing file as it was and removes a file
    it created; it is raised as an OutputError naming the file."""
    created = not db_path.exists()
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        con.execute("ATTACH ? AS target", [str(db_path)])
    except (OSError, duckdb.IOException) as exc:
        raise output_error(db_path, exc) from None
    try:
        create_tables(con, "target")
        con.execute("BEGIN TRANSACTION")
        for name in TABLES:
            con.execute(f"DELETE FROM target.{name} WHERE {in_list('run_id')}", [run_ids])
            con.execute(
                f"INSERT INTO target.{name} BY NAME SELECT * FROM {name} WHERE {in_list('run_id')}",
                [run_ids],
            )
        con.execute("COMMIT")
        con.execute("DETACH target")  # writes the file itself (a checkpoint): it may fail on a full disk
    except (OSError, duckdb.IOException, duckdb.TransactionException, duckdb.FatalException) as exc:
        _end_failed_save(con, db_path, created)
        raise output_error(db_path, exc) from None
    except BaseException:
        _end_failed_save(con, db_path, created)
        raise


def _end_failed_save(con: duckdb.DuckDBPyConnection, db_path: Path, created: bool) -> None:
    """Roll back and detach what is left of a failed save (each step may fail in turn once the disk
    is full), and remove the file when this save created it."""
    for statement in ("ROLLBACK", "DETACH target"):
        try:
            con.execute(statement)
        except duckdb.Error:
            pass
    if created:
        for leftover in (db_path, db_path.with_name(db_path.name + ".wal")):
            leftover.unlink(missing_ok=True)


def save_parquet(con: duckdb.DuckDBPyConnection, out_dir: Path) -> list[Path]:
    """Write one Parquet file per table, each atomically (temporary file, then rename)."""
    written = []
    for name in TABLES:
        final = out_dir / f"{name}.parquet"
        with atomic_path(final) as tmp:
            try:
                con.execute(f"COPY (SELECT * FROM {name} ORDER BY ALL) TO '{_sql_path(str(tmp))}' (FORMAT parquet)")
            except duckdb.IOException as exc:
                raise output_error(final, exc) from None
        written.append(final)
    return written


def _sql_path(path: str) -> str:
    return path.replace("'", "''")


def load_duckdb(db_path: Path, limit_bytes: int | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory connection holding a copy of a saved DuckDB file's tables (the file is only read)."""
    con = connect(limit_bytes)
    con.execute("ATTACH ? AS src (READ_ONLY)", [str(db_path)])
    for name in TABLES:
        exists = con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'src' AND table_name = ?", [name]
        ).fetchall()[0][0]
        if exists:
            append_rows(con, name, f"SELECT * FROM src.{name}")
    con.execute("DETACH src")
    return con
