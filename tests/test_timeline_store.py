"""The timeline of a working connection: rows with a run number, a view with the documented columns."""

from __future__ import annotations

import duckdb

from analyzer.ingest import timeline_store
from analyzer.ingest.database import append_rows, connect, load_duckdb, save_duckdb
from analyzer.ingest.schema import TABLES

ROWS = """SELECT * FROM (VALUES
    ('r', 0, 'device_task', 'Ascend Hardware', 1, 'Stream 1', 'MatMul', 100, 200, 1, 7),
    ('r', 1, 'device_task', 'Ascend Hardware', 1, 'Stream 1', 'Add', 300, 400, 1, 8),
    ('r', NULL, 'host_api', 'CANN', 42, 'Thread 42', 'aclnnAdd', 50, 90, NULL, NULL),
    ('other', NULL, 'framework_op', 'Python', 42, 'Thread 42', 'forward', 10, 900, NULL, NULL),
    (NULL, NULL, 'other', NULL, NULL, NULL, 'orphan', 1, 2, NULL, NULL)
) v(run_id, device_id, kind, process, thread_id, thread_name, name, start_ns, end_ns, stream_id, task_id)"""


def _timeline(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute("SELECT run_id, device_id, name FROM timeline ORDER BY run_id, name COLLATE C").fetchall()


def test_the_view_shows_the_documented_columns_in_schema_order():
    con = connect()
    described = [(r[0], r[1]) for r in con.execute("DESCRIBE timeline").fetchall()]
    assert described == [(c.name, c.type) for c in TABLES["timeline"].columns]
    stored = [r[0] for r in con.execute(f"DESCRIBE {timeline_store.ROWS}").fetchall()]
    assert "run_id" not in stored and stored[0] == "run_no"


def test_rows_keep_a_number_per_run_and_show_their_run_id():
    con = connect()
    append_rows(con, "timeline", ROWS)
    assert _timeline(con) == [("other", None, "forward"), ("r", 1, "Add"), ("r", 0, "MatMul"), ("r", None, "aclnnAdd")]
    keys = con.execute(f"SELECT run_no, run_id FROM {timeline_store.KEYS} ORDER BY run_no").fetchall()
    assert keys == [(1, "other"), (2, "r")]  # numbered in run id order; the row with no run is not kept
    timeline_store.register(con, "r")
    timeline_store.register(con, "third")
    assert con.execute(f"SELECT run_id FROM {timeline_store.KEYS} ORDER BY run_no").fetchall() == [
        ("other",), ("r",), ("third",)]


def test_split_devices_moves_device_rows_and_copies_the_rest_to_every_device():
    con = connect()
    append_rows(con, "timeline", ROWS)
    timeline_store.split_devices(con, "r", [0, 1])
    assert _timeline(con) == [
        ("other", None, "forward"),
        ("r/dev0", 0, "MatMul"), ("r/dev0", None, "aclnnAdd"),
        ("r/dev1", 1, "Add"), ("r/dev1", None, "aclnnAdd"),
    ]


def test_duplicate_device_tasks_keep_the_row_with_a_device():
    con = connect()
    append_rows(con, "timeline", """SELECT * FROM (VALUES
        ('r', NULL, 'json twin', 1, 7, 100), ('r', 0, 'task_time', 1, 7, 100),
        ('r', NULL, 'json only', 1, 8, 300), ('r', NULL, 'json only again', 1, 8, 300),
        ('s', NULL, 'other run', 1, 7, 100)
    ) v(run_id, device_id, name, stream_id, task_id, start_ns)""")
    con.execute(f"UPDATE {timeline_store.ROWS} SET kind = 'device_task'")
    timeline_store.delete_duplicate_device_tasks(con, "r")
    assert _timeline(con) == [("r", None, "json only"), ("r", 0, "task_time"), ("s", None, "other run")]


TWINS = """SELECT * FROM (VALUES
    ('r', NULL, 'device_task', 'json twin', 1, 7, 100),
    ('r', NULL, 'device_task', 'json only', 1, 8, 300),
    ('r', 0, 'device_task', 'twin naming a device', 1, 7, 100),
    ('r', NULL, 'host_api', 'same key, not a task', 1, 7, 100),
    ('s', NULL, 'device_task', 'other run', 1, 7, 100)
) v(run_id, device_id, kind, name, stream_id, task_id, start_ns)"""
TASK_TIME_ROW = ("SELECT 'r' AS run_id, 0 AS device_id, 'device_task' AS kind, "
                 "'task_time' AS name, 1 AS stream_id, 7 AS task_id, 100 AS start_ns")


def _insert_without_superseded(con: duckdb.DuckDBPyConnection, select_sql: str) -> None:
    timeline_store.register_all(con, select_sql)
    numbered = (f"SELECT k.run_no, v.* EXCLUDE (run_id) FROM ({select_sql}) v "
                f"JOIN {timeline_store.KEYS} k USING (run_id)")
    rows = timeline_store.without_superseded(numbered, timeline_store.run_no_sql("'r'"))
    con.execute(f"INSERT INTO {timeline_store.ROWS} BY NAME {rows}")


def test_a_device_task_whose_twin_naming_a_device_is_in_is_left_out_as_the_dedupe_would_delete_it():
    con = connect()
    append_rows(con, "timeline", TASK_TIME_ROW)
    _insert_without_superseded(con, TWINS)
    assert _timeline(con) == [
        ("r", None, "json only"), ("r", None, "same key, not a task"), ("r", 0, "task_time"),
        ("r", 0, "twin naming a device"), ("s", None, "other run")]
    # Rows naming no device inserted first, then the same rows naming one in the same order: once
    # deduplicated, the timeline is the same (the first row naming a device is kept).
    other_order = connect()
    append_rows(other_order, "timeline", f"SELECT * FROM ({TWINS}) WHERE device_id IS NULL")
    append_rows(other_order, "timeline", TASK_TIME_ROW)
    append_rows(other_order, "timeline", f"SELECT * FROM ({TWINS}) WHERE device_id IS NOT NULL")
    for c in (con, other_order):
        timeline_store.delete_duplicate_device_tasks(c, "r")
    assert _timeline(con) == _timeline(other_order) == [
        ("r", None, "json only"), ("r", None, "same key, not a task"), ("r", 0, "task_time"),
        ("s", None, "other run")]


def test_a_saved_database_holds_the_documented_table_and_loads_back(tmp_path):
    con = connect()
    append_rows(con, "timeline", ROWS)
    db = tmp_path / "runs.duckdb"
    save_duckdb(con, db, ["r", "other"])
    saved = duckdb.connect(str(db), read_only=True)
    kinds = saved.execute("SELECT table_name FROM duckdb_tables() WHERE table_name = 'timeline'").fetchall()
    assert kinds == [("timeline",)]
    assert saved.execute("SELECT count(*) FROM timeline").fetchall() == [(4,)]
    saved.close()
    assert _timeline(load_duckdb(db)) == _timeline(con)
