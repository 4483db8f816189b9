"""The timeline and ops of a working connection: rows with a run number, views with the documented columns."""

from __future__ import annotations

import duckdb
import pytest

from analyzer.ingest import numbered_rows
from analyzer.ingest.database import append_rows, connect, load_duckdb, save_duckdb
from analyzer.ingest.schema import TABLES

ROWS = """SELECT * FROM (VALUES
    ('r', 0, 'device_task', 'Ascend Hardware', 1, 'Stream 1', 'MatMul', 100, 200, 1, 7),
    ('r', 1, 'device_task', 'Ascend Hardware', 1, 'Stream 1', 'Add', 300, 400, 1, 8),
    ('r', NULL, 'host_api', 'CANN', 42, 'Thread 42', 'aclnnAdd', 50, 90, NULL, NULL),
    ('other', NULL, 'framework_op', 'Python', 42, 'Thread 42', 'forward', 10, 900, NULL, NULL),
    (NULL, NULL, 'other', NULL, NULL, NULL, 'orphan', 1, 2, NULL, NULL)
) v(run_id, device_id, kind, process, thread_id, thread_name, name, start_ns, end_ns, stream_id, task_id)"""


OPS = """SELECT * FROM (VALUES
    ('r', 0, 1, 7, 'MatMul', 100, 200), ('r', 1, 1, 8, 'Add', 300, 400),
    ('r', NULL, NULL, NULL, 'allreduce', 50, 90), ('other', NULL, 2, 9, 'forward', 10, 900),
    (NULL, NULL, NULL, NULL, 'orphan', 1, 2)
) v(run_id, device_id, stream_id, task_id, op_name, start_ns, end_ns)"""
SOURCES = {"timeline": (ROWS, "name"), "ops": (OPS, "op_name")}


def _rows(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple]:
    name = SOURCES[table][1]
    return con.execute(f"SELECT run_id, device_id, {name} FROM {table} ORDER BY run_id, {name} COLLATE C").fetchall()


@pytest.mark.parametrize("table", sorted(numbered_rows.ROWS))
def test_the_view_shows_the_documented_columns_in_schema_order(table):
    con = connect()
    described = [(r[0], r[1]) for r in con.execute(f"DESCRIBE {table}").fetchall()]
    assert described == [(c.name, c.type) for c in TABLES[table].columns]
    stored = [r[0] for r in con.execute(f"DESCRIBE {numbered_rows.ROWS[table]}").fetchall()]
    assert "run_id" not in stored and stored[0] == "run_no"


def test_rows_keep_a_number_per_run_and_show_their_run_id():
    con = connect()
    append_rows(con, "timeline", ROWS)
    assert _rows(con, "timeline") == [
        ("other", None, "forward"),
        ("r", 1, "Add"),
        ("r", 0, "MatMul"),
        ("r", None, "aclnnAdd"),
    ]
    keys = con.execute(f"SELECT run_no, run_id FROM {numbered_rows.KEYS} ORDER BY run_no").fetchall()
    assert keys == [(1, "other"), (2, "r")]  # numbered in run id order; the row with no run is not kept
    numbered_rows.register(con, "r")
    numbered_rows.register(con, "third")
    append_rows(con, "ops", OPS)  # the tables share the numbers
    assert con.execute(f"SELECT run_id FROM {numbered_rows.KEYS} ORDER BY run_no").fetchall() == [
        ("other",),
        ("r",),
        ("third",),
    ]
    assert _rows(con, "ops") == [
        ("other", None, "forward"),
        ("r", 1, "Add"),
        ("r", 0, "MatMul"),
        ("r", None, "allreduce"),
    ]


@pytest.mark.parametrize("table", sorted(numbered_rows.ROWS))
def test_split_devices_moves_device_rows_and_copies_the_rest_to_every_device(table):
    con = connect()
    source, _ = SOURCES[table]
    append_rows(con, table, source)
    numbered_rows.split_devices(con, table, "r", [0, 1])
    nameless = "aclnnAdd" if table == "timeline" else "allreduce"
    assert _rows(con, table) == [
        ("other", None, "forward"),
        ("r/dev0", 0, "MatMul"),
        ("r/dev0", None, nameless),
        ("r/dev1", 1, "Add"),
        ("r/dev1", None, nameless),
    ]


def test_rows_go_in_through_the_insert_target_with_their_run_number():
    con = connect()
    numbered_rows.register(con, "r")
    into, run = numbered_rows.target("ops")
    con.execute(f"INSERT INTO {into} BY NAME SELECT {run}, 'k' AS op_name", {"run_id": "r"})
    assert _rows(con, "ops") == [("r", None, "k")]
    assert numbered_rows.target("steps") == ("steps", "$run_id::VARCHAR AS run_id")


def test_a_saved_database_holds_the_documented_tables_and_loads_back(tmp_path):
    con = connect()
    append_rows(con, "timeline", ROWS)
    append_rows(con, "ops", OPS)
    db = tmp_path / "runs.duckdb"
    save_duckdb(con, db, ["r", "other"])
    saved = duckdb.connect(str(db), read_only=True)
    kinds = saved.execute(
        "SELECT table_name FROM duckdb_tables() WHERE table_name IN ('timeline', 'ops') ORDER BY 1"
    ).fetchall()
    assert kinds == [("ops",), ("timeline",)]
    assert saved.execute("SELECT count(*) FROM timeline").fetchall() == [(4,)]
    assert saved.execute("SELECT count(*) FROM ops").fetchall() == [(4,)]
    saved.close()
    loaded = load_duckdb(db)
    assert _rows(loaded, "timeline") == _rows(con, "timeline")
    assert _rows(loaded, "ops") == _rows(con, "ops")


def test_appended_rows_are_stored_in_the_selects_order_whatever_the_runs_already_numbered():
    con = connect()
    for n in range(10):  # more keys than rows: a join would build its hash table on the rows
        numbered_rows.register(con, f"run{n}")
    append_rows(
        con,
        "ops",
        "SELECT * FROM (VALUES ('run1', 's1'), ('run2', 's2'), ('run3', 's3'), ('run0', 's0')) v(run_id, op_name)",
    )
    stored = con.execute(f"SELECT op_name FROM {numbered_rows.ROWS['ops']} ORDER BY rowid").fetchall()
    assert stored == [("s1",), ("s2",), ("s3",), ("s0",)]


def test_a_row_inserted_for_a_run_not_yet_numbered_fails_instead_of_vanishing():
    con = connect()
    into, run = numbered_rows.target("ops")
    with pytest.raises(duckdb.ConstraintException):
        con.execute(f"INSERT INTO {into} BY NAME SELECT {run}, 'k' AS op_name", {"run_id": "never registered"})
