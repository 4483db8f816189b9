"""Rows made in Python go into a table in one statement (analyzer/row_inserts.py), in their order."""

from __future__ import annotations

import duckdb

from analyzer.row_inserts import insert_values


def _con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("CREATE TABLE t (n INTEGER, name VARCHAR, size BIGINT, share DOUBLE, note VARCHAR)")
    return con


def test_the_rows_go_in_one_statement_in_their_order():
    con = _con()
    rows = [(i, f"run{i % 7}", i * 2**33, i / 4, None if i % 2 else "even") for i in range(500)]
    con.execute("CALL enable_logging('QueryLog')")
    insert_values(con, "t", rows)
    con.execute("CALL disable_logging()")
    inserts = con.execute("SELECT count(*) FROM duckdb_logs WHERE type = 'QueryLog' AND message LIKE 'INSERT%'")
    assert inserts.fetchall() == [(1,)]
    assert con.execute("SELECT * FROM t").fetchall() == [tuple(r) for r in rows]


def test_values_are_cast_to_the_columns_and_a_column_may_be_all_null():
    con = _con()
    insert_values(con, "t", [(1, None, 7, 2, None), (2, None, None, 0.5, None)])
    assert con.execute("SELECT * FROM t").fetchall() == [(1, None, 7, 2.0, None), (2, None, None, 0.5, None)]
    assert con.execute("SELECT typeof(share) FROM t LIMIT 1").fetchall() == [("DOUBLE",)]


def test_no_rows_insert_nothing():
    con = _con()
    insert_values(con, "t", [])
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(0,)]
