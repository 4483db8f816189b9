"""Device tasks msprof writes twice: one row each in the timeline (left out at insert, or deleted)."""

from __future__ import annotations

import duckdb

from analyzer.ingest.database import append_rows, connect
from analyzer.ingest.timeline import timeline_store


def _timeline(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute("SELECT run_id, device_id, name FROM timeline ORDER BY run_id, name COLLATE C").fetchall()


def test_duplicate_device_tasks_keep_the_row_with_a_device():
    con = connect()
    append_rows(
        con,
        "timeline",
        """SELECT * FROM (VALUES
        ('r', NULL, 'json twin', 1, 7, 100), ('r', 0, 'task_time', 1, 7, 100),
        ('r', NULL, 'json only', 1, 8, 300), ('r', NULL, 'json only again', 1, 8, 300),
        ('s', NULL, 'other run', 1, 7, 100)
    ) v(run_id, device_id, name, stream_id, task_id, start_ns)""",
    )
    con.execute("UPDATE timeline SET kind = 'device_task'")
    timeline_store.delete_duplicate_device_tasks(con, "r")
    assert _timeline(con) == [("r", None, "json only"), ("r", 0, "task_time"), ("s", None, "other run")]


TWINS = """SELECT * FROM (VALUES
    ('r', NULL, 'device_task', 'json twin', 1, 7, 100),
    ('r', NULL, 'device_task', 'json only', 1, 8, 300),
    ('r', 0, 'device_task', 'twin naming a device', 1, 7, 100),
    ('r', NULL, 'host_api', 'same key, not a task', 1, 7, 100),
    ('s', NULL, 'device_task', 'other run', 1, 7, 100)
) v(run_id, device_id, kind, name, stream_id, task_id, start_ns)"""
TASK_TIME_ROW = (
    "SELECT 'r' AS run_id, 0 AS device_id, 'device_task' AS kind, "
    "'task_time' AS name, 1 AS stream_id, 7 AS task_id, 100 AS start_ns"
)


def _insert_without_superseded(con: duckdb.DuckDBPyConnection, select_sql: str) -> None:
    rows = timeline_store.without_superseded(select_sql, "run_id = 'r'")
    con.execute(f"INSERT INTO timeline BY NAME {rows}")


def test_a_device_task_whose_twin_naming_a_device_is_in_is_left_out_as_the_dedupe_would_delete_it():
    con = connect()
    append_rows(con, "timeline", TASK_TIME_ROW)
    _insert_without_superseded(con, TWINS)
    assert _timeline(con) == [
        ("r", None, "json only"),
        ("r", None, "same key, not a task"),
        ("r", 0, "task_time"),
        ("r", 0, "twin naming a device"),
        ("s", None, "other run"),
    ]
    # Rows naming no device inserted first, then the same rows naming one in the same order: once
    # deduplicated, the timeline is the same (the first row naming a device is kept).
    other_order = connect()
    append_rows(other_order, "timeline", f"SELECT * FROM ({TWINS}) WHERE device_id IS NULL")
    append_rows(other_order, "timeline", TASK_TIME_ROW)
    append_rows(other_order, "timeline", f"SELECT * FROM ({TWINS}) WHERE device_id IS NOT NULL")
    for c in (con, other_order):
        timeline_store.delete_duplicate_device_tasks(c, "r")
    assert (
        _timeline(con)
        == _timeline(other_order)
        == [
            ("r", None, "json only"),
            ("r", None, "same key, not a task"),
            ("r", 0, "task_time"),
            ("s", None, "other run"),
        ]
    )
