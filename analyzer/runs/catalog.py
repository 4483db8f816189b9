"""The batch catalog file: create it, say which fingerprints it knows, and commit one run's rows atomically.

Only the parent process of a batch (the driver) writes here, one transaction per run, so a batch
killed at any moment leaves a consistent catalog, and a rerun adds what is missing without
duplicates. DuckDB locks the file for the process that opens it for writing; a second batch on
the same catalog is refused with a message naming the holder (``catalog_in_use``), not queued.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pyarrow as pa

from analyzer.atomic_files import atomic_path
from analyzer.duckdb_connect import close_to_files, connect_offline, is_duckdb_file
from analyzer.errors import TriageError, first_line
from analyzer.ingest.database import all_or_nothing, insert_tables
from analyzer.ingest.sql_values import in_list
from analyzer.runs.catalog_schema import CATALOG_FORMAT_VERSION, CATALOG_TABLES, PER_RUN_TABLES, catalog_ddl
from analyzer.runs.work import INFRASTRUCTURE


class CatalogError(TriageError):
    """The catalog cannot be opened or is not a catalog. The message is meant for the user."""


def create_catalog_tables(con: duckdb.DuckDBPyConnection) -> None:
    """CREATE every catalog table (idempotent), add the columns an older format lacks (its rows read NULL
    there) and record the format version."""
    for name in CATALOG_TABLES:
        con.execute(catalog_ddl(name))
    _add_missing_columns(con)
    con.execute("CREATE TABLE IF NOT EXISTS catalog_info (key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute("INSERT OR REPLACE INTO catalog_info VALUES ('format_version', ?)", [str(CATALOG_FORMAT_VERSION)])


def _add_missing_columns(con: duckdb.DuckDBPyConnection) -> None:
    """ALTER TABLE ADD COLUMN for each column of the schema that a table written by an older format lacks."""
    have = _columns_present(con)
    for name, table in CATALOG_TABLES.items():
        for c in table.columns:
            if c.name not in have.get(name, ()):
                con.execute(f'ALTER TABLE {name} ADD COLUMN "{c.name}" {c.type}')


def _columns_present(con: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    """The columns of each table the catalog file holds."""
    rows = con.execute(
        "SELECT table_name, list(column_name) FROM duckdb_columns() WHERE NOT internal AND database_name = "
        "current_database() AND schema_name = 'main' GROUP BY table_name"
    ).fetchall()
    return {table: set(columns) for table, columns in rows}


def format_version(con: duckdb.DuckDBPyConnection) -> int | None:
    """The catalog format a catalog file records (None: none recorded, or not a number)."""
    if not _has_table(con, "catalog_info"):
        return None
    rows = con.execute("SELECT value FROM catalog_info WHERE key = 'format_version'").fetchall()
    return int(rows[0][0]) if rows and str(rows[0][0]).isdigit() else None


def _refuse_newer(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """CatalogError when the catalog was written by a newer npu-triage: its tables may mean what this one
    cannot keep, so it is not written (nor its format recorded as this one's)."""
    found = format_version(con)
    if found is not None and found > CATALOG_FORMAT_VERSION:
        con.close()
        raise CatalogError(
            f"{path}: catalog format {found} was written by a newer npu-triage (this one writes format "
            f"{CATALOG_FORMAT_VERSION}); upgrade npu-triage to add to it, or give another catalog file"
        )


def open_catalog(path: Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (creating when writable) a catalog file; CatalogError when it is something else
    (not a DuckDB file, or a DuckDB file holding other tables)."""
    if read_only and not path.is_file():
        raise CatalogError(f"{path}: no such catalog file (create one with `npu-triage batch ... --catalog {path}`)")
    if path.exists() and (not path.is_file() or not is_duckdb_file(path)):
        raise CatalogError(f"{path}: is not an npu-triage catalog (not a DuckDB file); give a catalog or a new file")
    try:
        if not read_only:
            path.parent.mkdir(parents=True, exist_ok=True)
        con = connect_offline(str(path), read_only=read_only, spill_now=False)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise CatalogError(catalog_in_use(path, str(exc))) from exc
        raise CatalogError(f"{path}: cannot open as a DuckDB catalog: {first_line(exc)}") from exc
    except (duckdb.Error, OSError) as exc:
        raise CatalogError(f"{path}: cannot open as a DuckDB catalog: {first_line(exc)}") from exc
    if not _has_table(con, "catalog_runs") and (read_only or _table_count(con)):
        con.close()
        raise CatalogError(
            f"{path}: is a DuckDB file but not an npu-triage catalog (no catalog_runs table); "
            "give a catalog or a new file"
        )
    if read_only:
        _as_current_format(con)
    else:
        _refuse_newer(con, path)
        create_catalog_tables(con)
    return con


def _as_current_format(con: duckdb.DuckDBPyConnection) -> None:
    """Show a catalog written by an older format as the current schema, without writing the file: a table it
    lacks (e.g. ``copies``) as an empty temporary table, a table lacking columns (e.g. ``findings`` before its
    explained_* columns) as a temporary view over it adding them as NULL, as a batch's migration would. A
    temporary object of that name is found before the file's table, so every reader sees one schema."""
    present = _columns_present(con)
    database = con.execute("SELECT current_database()").fetchall()[0][0]
    for name, table in CATALOG_TABLES.items():
        if name not in present:
            con.execute(catalog_ddl(name).replace("CREATE TABLE", "CREATE TEMP TABLE", 1))
        elif any(c.name not in present[name] for c in table.columns):
            items = [
                f'"{c.name}"' if c.name in present[name] else f'NULL::{c.type} AS "{c.name}"' for c in table.columns
            ]
            con.execute(f'CREATE TEMP VIEW {name} AS SELECT {", ".join(items)} FROM "{database}".main.{name}')


def _table_count(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute("SELECT count(*) FROM duckdb_tables() WHERE NOT internal").fetchall()[0][0]


def catalog_in_use(path: Path, duckdb_message: str) -> str:
    """The user's message when another process holds the catalog's lock.

    >>> catalog_in_use(Path("c.duckdb"), "Conflicting lock is held in /usr/bin/python3 (PID 42).")[:48]
    'c.duckdb: in use by another process (PID 42), e.'
    """
    pid = re.search(r"PID (\d+)", duckdb_message)
    holder = f" (PID {pid.group(1)})" if pid else ""
    return (
        f"{path}: in use by another process{holder}, e.g. a batch still writing it; "
        "one catalog takes one batch at a time: run again once it has finished"
    )


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [name]).fetchall()[0][0])


def catalogued_paths(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Per fingerprint already catalogued, as runs or as failures of the input, the paths it is catalogued under
    (sorted). A failure of the machinery (work.INFRASTRUCTURE) is no verdict on the export: it is tried again."""
    rows = con.execute(
        "SELECT fingerprint, list(DISTINCT path ORDER BY path) FROM (SELECT fingerprint, path FROM catalog_runs "
        "UNION ALL SELECT fingerprint, path FROM failures WHERE NOT starts_with(message, ?)) "
        "WHERE fingerprint IS NOT NULL GROUP BY fingerprint",
        [INFRASTRUCTURE],
    ).fetchall()
    return dict(rows)


def commit_run(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table]) -> None:
    """Write one run's tables in ONE transaction, replacing earlier rows of the same runs or failure."""
    commit_runs(con, [tables])


def commit_runs(con: duckdb.DuckDBPyConnection, runs: list[dict[str, pa.Table]]) -> None:
    """Write several runs' tables (each ``work.analyze_run``'s: rows or a failure, of distinct fingerprints) in
    ONE transaction, each replacing earlier rows of the same runs or failure: every run is whole or absent,
    and the catalog pays one commit for all."""
    with all_or_nothing(con):
        found = [t["catalog_runs"] for t in runs if "catalog_runs" in t]
        run_ids = [rid for t in found for rid in t.column("run_id").to_pylist()]
        for name in PER_RUN_TABLES:
            con.execute(f"DELETE FROM {name} WHERE {in_list('run_id')}", [run_ids])
        if run_ids:  # an earlier attempt the machinery lost (work.INFRASTRUCTURE) is done now
            prints = [fp for t in found for fp in t.column("fingerprint").to_pylist()]
            con.execute(f"DELETE FROM failures WHERE {in_list('fingerprint')}", [prints])
        failed = [t["failures"] for t in runs if "failures" in t]
        if failed:  # the same path and fingerprint failing again: its new message replaces the old
            con.register("_failed_again", pa.concat_tables(failed).select(["path", "fingerprint"]))
            con.execute(
                "DELETE FROM failures WHERE (path, fingerprint) IN (SELECT (path, fingerprint) FROM _failed_again)"
            )
            con.unregister("_failed_again")
        names = dict.fromkeys(name for t in runs for name in t)
        insert_tables(con, {name: _concat([t[name] for t in runs if name in t]) for name in names})


def _concat(tables: list[pa.Table]) -> pa.Table:
    """The runs' rows of one table; a run's findings explained in the driver hold columns a worker's leave out
    (work.DRIVER_COLUMNS): only then are the schemas merged, which costs several times a plain concatenation."""
    schema = tables[0].schema
    same = all(t.schema.equals(schema) for t in tables)
    return pa.concat_tables(tables, promote_options="none" if same else "default")


def record_failure(con: duckdb.DuckDBPyConnection, row: dict[str, str]) -> None:
    """Write one failures row (replacing the same path and fingerprint), in its own transaction."""
    commit_run(
        con,
        {
            "failures": pa.Table.from_pylist(
                [row], schema=pa.schema([(c, pa.string()) for c in ("path", "fingerprint", "message")])
            )
        },
    )


RUN_LIST_SQL = """
SELECT r.run_id, r.path, r.cann_version, r.chip, r.model_name, r.batch_size, m.task_count, m.busy_ratio,
       m.step_time_p50_us, f.code AS top_code, f.subject AS top_subject, f.severity AS top_severity,
       f.title AS top_title,
       EXISTS (SELECT 1 FROM run_problems p WHERE p.run_id = r.run_id AND p.severity = 'error') AS partial
FROM catalog_runs r
LEFT JOIN run_metrics m USING (run_id)
LEFT JOIN findings f ON f.run_id = r.run_id AND f.rank = 1
ORDER BY r.path, r.run_id
"""


def list_runs(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """Every catalogued run with its key metrics and its top finding, by path; ``partial``: it lost input (an
    error among its run_problems)."""
    return con.sql(RUN_LIST_SQL).to_arrow_table()


def read_only_query(con: duckdb.DuckDBPyConnection, sql: str) -> pa.Table:
    """Run user SQL on a read-only catalog connection with file access switched off."""
    close_to_files(con, lock_settings=True)
    return con.sql(sql).to_arrow_table()


def export_parquet(con: duckdb.DuckDBPyConnection, out_dir: Path) -> list[Path]:
    """One Parquet file per catalog table, each written atomically (temporary file, then rename)."""
    import pyarrow.parquet as pq  # heavy, and only this export writes Parquet

    written = []
    for name in CATALOG_TABLES:
        table = con.sql(f"SELECT * FROM {name} ORDER BY ALL").to_arrow_table()
        with atomic_path(out_dir / f"{name}.parquet") as tmp:
            pq.write_table(table, tmp)
        written.append(out_dir / f"{name}.parquet")
    return written
