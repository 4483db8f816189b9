"""Device tasks written twice by msprof (task_time_*.csv and msprof_*.json): one row each in the timeline.

This module says which device-task rows of a run are the same task, leaves them out while a reader
inserts (``without_superseded``), or deletes the repeats left (``delete_duplicate_device_tasks``).
"""

from __future__ import annotations

import duckdb

from analyzer.ingest.sql_values import IN_RUNS

# What makes two device-task rows one task (msprof writes each to task_time CSVs and timeline JSON).
_TASK_KEY = ("stream_id", "task_id", "start_ns")


def without_superseded(select_sql: str, runs: str) -> str:
    """SQL of the rows of ``select_sql`` (timeline rows with run_id) less those of the runs ``runs``
    selects (a condition on run_id: ``run_id = $run_id``, or ``sql_values.IN_RUNS`` for many runs read
    together) that ``delete_duplicate_device_tasks`` would delete in any order of insertion: device
    tasks naming no device whose (stream, task, start) their run already holds on a row naming one,
    each run's rows left out against its own. A reader leaves them out instead of inserting them to be
    deleted (msprof's timeline JSON read after its task_time CSVs). Only those runs' tasks are hashed,
    however many runs the connection holds."""
    return (
        f"SELECT e.* FROM ({select_sql}) e ANTI JOIN ({superseding_tasks(runs)}) d ON d.run_id = e.run_id "
        f"AND {same_task('d', 'e')} AND e.kind = 'device_task' AND e.device_id IS NULL"
    )


def superseding_tasks(runs: str) -> str:
    """SQL: the device tasks naming a device of the runs ``runs`` selects (a condition on run_id), with their
    run and task key: those a device task naming none repeats is superseded by."""
    return (
        f"SELECT run_id, {', '.join(_TASK_KEY)} FROM timeline "
        f"WHERE {runs} AND kind = 'device_task' AND device_id IS NOT NULL"
    )


def same_task(a: str, b: str) -> str:
    """SQL: the rows ``a`` and ``b`` (aliases) hold the same task key (stream, task, start; NULL equal to NULL)."""
    return " AND ".join(f"{a}.{c} IS NOT DISTINCT FROM {b}.{c}" for c in _TASK_KEY)


def delete_duplicate_device_tasks(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Keep one device-task row per (stream, task, start) of the run: the first with a device, else the
    first (msprof writes each task to task_time_*.csv and msprof_*.json).

    Readers mostly leave the repeats out already (``without_superseded``), so whether any is left is
    asked first: a count per task, cheaper than the DELETE's search for the row to keep."""
    if not _has_repeats(con, run_id):
        return
    con.execute(
        "DELETE FROM timeline WHERE run_id = $r AND kind = 'device_task' AND rowid NOT IN ("
        "SELECT arg_min(rowid, (device_id IS NULL, rowid)) FROM timeline "
        f"WHERE run_id = $r AND kind = 'device_task' GROUP BY {', '.join(_TASK_KEY)})",
        {"r": run_id},
    )


def _has_repeats(con: duckdb.DuckDBPyConnection, run_id: str) -> bool:
    return con.execute(
        "SELECT EXISTS (SELECT 1 FROM timeline WHERE run_id = ? AND kind = 'device_task' "
        f"GROUP BY {', '.join(_TASK_KEY)} HAVING count(*) > 1)",
        [run_id],
    ).fetchall()[0][0]


def runs_with_repeats(con: duckdb.DuckDBPyConnection, runs: list[str]) -> list[str]:
    """Of ``runs``, those holding a device task twice (``delete_duplicate_device_tasks`` has work), in order."""
    if not runs:
        return []
    rows = con.execute(
        f"SELECT DISTINCT run_id FROM timeline WHERE {IN_RUNS} "
        f"AND kind = 'device_task' GROUP BY run_id, {', '.join(_TASK_KEY)} HAVING count(*) > 1 ORDER BY run_id",
        {"runs": runs},
    ).fetchall()
    return [r[0] for r in rows]
