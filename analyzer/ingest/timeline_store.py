"""Device tasks written twice by msprof (task_time_*.csv and msprof_*.json): one row each in the timeline.

The timeline's rows are stored numbered (``numbered_rows``); this module says which device-task
rows of a run are the same task, leaves them out while a reader inserts (``without_superseded``), or
deletes the repeats left (``delete_duplicate_device_tasks``).
"""

from __future__ import annotations

import duckdb

from analyzer.ingest.numbered_rows import ROWS, run_no_sql

_ROWS = ROWS["timeline"]
# What makes two device-task rows one task (msprof writes each to task_time CSVs and timeline JSON).
_TASK_KEY = ("stream_id", "task_id", "start_ns")


def without_superseded(select_sql: str, run_no: str) -> str:
    """SQL of the rows of ``select_sql`` (timeline rows with run_no) less those of the run numbered
    ``run_no`` (an SQL expression) that ``delete_duplicate_device_tasks`` would delete in any order
    of insertion: device tasks naming no device whose (stream, task, start) the run already holds on
    a row naming one. A reader leaves them out instead of inserting them to be deleted (msprof's
    timeline JSON read after its task_time CSVs: 2M rows at 2M tasks, 2 to 2.6 s of 30 to 38). Only
    that run's tasks are hashed, however many runs the connection holds."""
    same = " AND ".join(f"d.{c} IS NOT DISTINCT FROM e.{c}" for c in _TASK_KEY)
    named = (
        f"SELECT run_no, {', '.join(_TASK_KEY)} FROM {_ROWS} "
        f"WHERE run_no = {run_no} AND kind = 'device_task' AND device_id IS NOT NULL"
    )
    return (
        f"SELECT e.* FROM ({select_sql}) e ANTI JOIN ({named}) d ON d.run_no = e.run_no "
        f"AND {same} AND e.kind = 'device_task' AND e.device_id IS NULL"
    )


def delete_duplicate_device_tasks(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Keep one device-task row per (stream, task, start) of the run: the first with a device, else the
    first (msprof writes each task to task_time_*.csv and msprof_*.json)."""
    run_no = run_no_sql("$r")
    con.execute(
        f"DELETE FROM {_ROWS} WHERE run_no = {run_no} AND kind = 'device_task' AND rowid NOT IN ("
        f"SELECT arg_min(rowid, (device_id IS NULL, rowid)) FROM {_ROWS} "
        f"WHERE run_no = {run_no} AND kind = 'device_task' GROUP BY {', '.join(_TASK_KEY)})",
        {"r": run_id},
    )
