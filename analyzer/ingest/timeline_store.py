"""How a working connection stores the timeline: a run number on each row, and a view that shows the run id.

The timeline is the table with millions of rows, and its run id (the export folder's name, 40 to 50
characters) was its widest column: DuckDB keeps in-memory tables uncompressed, so the id took about
50 bytes a row, a quarter of a torch_npu timeline (33 of 146 MiB at 735k events) and 600 MB at 2M
msprof tasks, all of it spilled to disk under a tight memory budget (``lean``). So the rows live in
``_timeline_rows`` with ``run_no`` (4 bytes), ``_run_keys`` maps each number to its run id, and
``timeline`` is a view with the documented columns in schema order (the join with a table of a few
rows costs nothing measurable; a query filtering on run_id is even faster).

Everything that writes timeline rows goes through this module (``target``, ``append``,
``split_devices``; the JSON reader leaves out device tasks already in, ``without_superseded``);
readers query ``timeline`` as before. A writer using ``target`` first numbers
its run (``register``; the loader does it before its reader threads start, so that two threads never
number one run at once). Saved DuckDB files and Parquet hold the documented table.
"""

from __future__ import annotations

from dataclasses import replace

import duckdb

from analyzer.ingest.schema import TABLES, Column

TABLE = "timeline"
ROWS = "_timeline_rows"
KEYS = "_run_keys"
# What makes two device-task rows one task (msprof writes each to task_time CSVs and timeline JSON).
_TASK_KEY = ("stream_id", "task_id", "start_ns")


def create(con: duckdb.DuckDBPyConnection) -> None:
    """Create the keys, the rows and the ``timeline`` view (when absent)."""
    table = TABLES[TABLE]
    run_no = Column("run_no", "UINTEGER", "", "Number of the run (_run_keys).")
    stored = replace(table, columns=(run_no, *(c for c in table.columns if c.name != "run_id")))
    shown = ", ".join("k.run_id" if c.name == "run_id" else f"t.{c.name}" for c in table.columns)
    con.execute(f"CREATE TABLE IF NOT EXISTS {KEYS} (run_no UINTEGER PRIMARY KEY, run_id VARCHAR NOT NULL UNIQUE)")
    con.execute(stored.ddl(ROWS))
    con.execute(f"CREATE VIEW IF NOT EXISTS {TABLE} AS SELECT {shown} "
                f"FROM {ROWS} t JOIN {KEYS} k ON k.run_no = t.run_no")


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
    from the parameter ``$run_id``: (table, item). Only the timeline differs from the plain table."""
    if table == TABLE:
        return ROWS, f"{run_no_sql('$run_id')} AS run_no"
    return table, "$run_id::VARCHAR AS run_id"


def append(con: duckdb.DuckDBPyConnection, select_sql: str, params: object = None) -> None:
    """INSERT BY NAME the rows of a SELECT that has the timeline's columns (``run_id`` among them),
    numbering the runs it names first; rows without a run id are not kept (no run shows them)."""
    register_all(con, select_sql, params)
    con.execute(
        f"INSERT INTO {ROWS} BY NAME SELECT k.run_no, s.* EXCLUDE (run_id) FROM ({select_sql}) s "
        f"JOIN {KEYS} k ON k.run_id = s.run_id",
        params,
    )


def without_superseded(select_sql: str, run_no: str) -> str:
    """SQL of the rows of ``select_sql`` (timeline rows with run_no) less those of the run numbered
    ``run_no`` (an SQL expression) that ``delete_duplicate_device_tasks`` would delete in any order
    of insertion: device tasks naming no device whose (stream, task, start) the run already holds on
    a row naming one. A reader leaves them out instead of inserting them to be deleted (msprof's
    timeline JSON read after its task_time CSVs: 2M rows at 2M tasks, 2 to 2.6 s of 30 to 38). Only
    that run's tasks are hashed, however many runs the connection holds."""
    same = " AND ".join(f"d.{c} IS NOT DISTINCT FROM e.{c}" for c in _TASK_KEY)
    named = (f"SELECT run_no, {', '.join(_TASK_KEY)} FROM {ROWS} "
             f"WHERE run_no = {run_no} AND kind = 'device_task' AND device_id IS NOT NULL")
    return (f"SELECT e.* FROM ({select_sql}) e ANTI JOIN ({named}) d ON d.run_no = e.run_no "
            f"AND {same} AND e.kind = 'device_task' AND e.device_id IS NULL")


def delete_duplicate_device_tasks(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Keep one device-task row per (stream, task, start) of the run: the first with a device, else the
    first (msprof writes each task to task_time_*.csv and msprof_*.json)."""
    run_no = run_no_sql("$r")
    con.execute(
        f"DELETE FROM {ROWS} WHERE run_no = {run_no} AND kind = 'device_task' AND rowid NOT IN ("
        f"SELECT arg_min(rowid, (device_id IS NULL, rowid)) FROM {ROWS} "
        f"WHERE run_no = {run_no} AND kind = 'device_task' GROUP BY {', '.join(_TASK_KEY)})",
        {"r": run_id},
    )


def split_devices(con: duckdb.DuckDBPyConnection, run_id: str, devices: list[int]) -> None:
    """Move the run's rows to one run per device ('<id>/dev<N>'): rows naming a device to its run,
    rows naming none (host APIs, a timeline without device ids) to every run of ``devices``."""
    old = run_no_sql("$r")
    register_all(con, f"SELECT $r || '/dev' || device_id AS run_id FROM {ROWS} "
                      f"WHERE run_no = {old} AND device_id IS NOT NULL "
                      f"UNION ALL SELECT $r || '/dev' || unnest($d::INTEGER[])", {"r": run_id, "d": devices})
    con.execute(
        f"UPDATE {ROWS} SET run_no = k.run_no FROM {KEYS} k WHERE {ROWS}.run_no = {old} "
        f"AND {ROWS}.device_id IS NOT NULL AND k.run_id = $r || '/dev' || {ROWS}.device_id",
        {"r": run_id},
    )
    con.execute(
        f"INSERT INTO {ROWS} BY NAME SELECT {ROWS}.* REPLACE (k.run_no AS run_no) FROM {ROWS} "
        f"CROSS JOIN (SELECT run_no FROM {KEYS} WHERE run_id IN (SELECT $r || '/dev' || unnest($d::INTEGER[]))) k "
        f"WHERE {ROWS}.run_no = {old}",
        {"r": run_id, "d": devices},
    )
    con.execute(f"DELETE FROM {ROWS} WHERE run_no = {old}", {"r": run_id})
