"""How a working connection stores its two big tables (timeline, ops): a run number on each row, and a view
that shows the run id.

A run id (the export folder's name, 40 to 50 characters) was the widest column of the tables with
millions of rows: DuckDB keeps in-memory tables uncompressed, so the id took about 50 bytes a row
(strings of more than 12 bytes live outside the row): a quarter of a torch_npu timeline (33 of 146
MiB at 735k events), 600 MB of the timeline and about 120 MB of ops at 2M msprof tasks, all of it
spilled to disk under a tight memory budget (``lean``). So the rows of ``timeline`` live in
``_timeline_rows`` and those of ``ops`` in ``_ops_rows``, each with ``run_no`` (4 bytes);
``_run_keys`` maps each number to its run id, and ``timeline`` and ``ops`` are views with the
documented columns in schema order (the join with a table of a few rows costs nothing measurable; a
query filtering on run_id is even faster).

Everything that writes such rows goes through this module (``target``, ``append``, ``split_devices``)
or names the stored table (``ROWS``) and its run (``run_no_sql``); readers query the views as before. A
writer using ``target`` first numbers its run (``register``; the loader does it before its reader
threads start, so that two threads never number one run at once). Saved DuckDB files and Parquet hold
the documented tables.
"""

from __future__ import annotations

from dataclasses import replace

import duckdb

from analyzer.ingest.schema import TABLES, Column

# Documented table -> the table holding its rows in a working connection.
ROWS = {"timeline": "_timeline_rows", "ops": "_ops_rows"}
KEYS = "_run_keys"


def create(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Create the keys, the rows of ``table`` and its view (when absent)."""
    documented = TABLES[table]
    # NOT NULL: a row written through ``target`` before its run was numbered fails loudly instead of
    # vanishing from the view.
    run_no = Column("run_no", "UINTEGER NOT NULL", "", "Number of the run (_run_keys).")
    stored = replace(documented, columns=(run_no, *(c for c in documented.columns if c.name != "run_id")))
    shown = ", ".join("k.run_id" if c.name == "run_id" else f"t.{c.name}" for c in documented.columns)
    con.execute(f"CREATE TABLE IF NOT EXISTS {KEYS} (run_no UINTEGER PRIMARY KEY, run_id VARCHAR NOT NULL UNIQUE)")
    con.execute(stored.ddl(ROWS[table]))
    con.execute(
        f"CREATE VIEW IF NOT EXISTS {table} AS SELECT {shown} FROM {ROWS[table]} t JOIN {KEYS} k ON k.run_no = t.run_no"
    )


def run_no_sql(run_id_sql: str) -> str:
    """SQL of the number of the run whose id is ``run_id_sql`` (a parameter such as ``$run_id``)."""
    return f"(SELECT run_no FROM {KEYS} WHERE run_id = {run_id_sql})"


def register(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Give ``run_id`` a number, unless it has one."""
    register_all(con, "SELECT $rid AS run_id", {"rid": run_id})


def register_all(con: duckdb.DuckDBPyConnection, select_sql: str, params: object = None) -> None:
    """Give a number to each run id that the SELECT's ``run_id`` column holds and that has none yet."""
    con.execute(
        f"INSERT INTO {KEYS} SELECT (SELECT coalesce(max(run_no), 0) FROM {KEYS}) "
        f"+ row_number() OVER (ORDER BY run_id), run_id FROM (SELECT DISTINCT run_id FROM ({select_sql}) "
        f"WHERE run_id IS NOT NULL AND run_id NOT IN (SELECT run_id FROM {KEYS}))",
        params,
    )


def target(table: str) -> tuple[str, str]:
    """Where rows of the normalized ``table`` are inserted, and the SELECT item that gives their run
    from the parameter ``$run_id``: (table, item). Only the numbered tables differ from the plain table."""
    if table in ROWS:
        return ROWS[table], f"{run_no_sql('$run_id')} AS run_no"
    return table, "$run_id::VARCHAR AS run_id"


def append(con: duckdb.DuckDBPyConnection, table: str, select_sql: str, params: object = None) -> None:
    """INSERT BY NAME the rows of a SELECT that has the numbered ``table``'s columns (``run_id`` among
    them), in the SELECT's order, numbering the runs it names first; rows without a run id are not
    kept (no run shows them). The order is explicit because a join need not keep it (a hash table
    built on a SELECT smaller than the keys gives its rows back grouped), and the gap views break
    ties by the order rows were stored in."""
    register_all(con, select_sql, params)
    con.execute(
        f"INSERT INTO {ROWS[table]} BY NAME SELECT k.run_no, s.* EXCLUDE (run_id, _source_row) "
        f"FROM (SELECT *, row_number() OVER () AS _source_row FROM ({select_sql})) s "
        f"JOIN {KEYS} k ON k.run_id = s.run_id ORDER BY s._source_row",
        params,
    )


def split_devices(con: duckdb.DuckDBPyConnection, table: str, run_id: str, devices: list[int]) -> None:
    """Move the run's rows of the numbered ``table`` to one run per device ('<id>/dev<N>'): rows naming a
    device to its run, rows naming none (host APIs, a timeline without device ids) to every run of
    ``devices``."""
    rows, old = ROWS[table], run_no_sql("$r")
    register_all(
        con,
        f"SELECT $r || '/dev' || device_id AS run_id FROM {rows} "
        f"WHERE run_no = {old} AND device_id IS NOT NULL "
        f"UNION ALL SELECT $r || '/dev' || unnest($d::INTEGER[])",
        {"r": run_id, "d": devices},
    )
    con.execute(
        f"UPDATE {rows} SET run_no = k.run_no FROM {KEYS} k WHERE {rows}.run_no = {old} "
        f"AND {rows}.device_id IS NOT NULL AND k.run_id = $r || '/dev' || {rows}.device_id",
        {"r": run_id},
    )
    con.execute(
        f"INSERT INTO {rows} BY NAME SELECT {rows}.* REPLACE (k.run_no AS run_no) FROM {rows} "
        f"CROSS JOIN (SELECT run_no FROM {KEYS} WHERE run_id IN (SELECT $r || '/dev' || unnest($d::INTEGER[]))) k "
        f"WHERE {rows}.run_no = {old}",
        {"r": run_id, "d": devices},
    )
    con.execute(f"DELETE FROM {rows} WHERE run_no = {old}", {"r": run_id})
