"""Evidence of many findings in one query: each finding's rows in its own query's order, else asked alone."""

from __future__ import annotations

import duckdb
import pytest

from analyzer.rule_engine.set_evidence import evidence_of, ordered


@pytest.fixture
def tasks() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT 'r' || (i % 3) AS run_id, 'op' || (i % 2) AS op, i AS start_ns, "
        "(i * 37) % 11 AS dur FROM range(60) r(i)"
    )
    return con


def _alone(con, sql: str, run: str, subject: str, limit: int):
    """The evidence as the runner asks it for one finding."""
    cursor = con.execute(f"SELECT * FROM ({sql}) LIMIT {limit}", {"run_id": run, "subject": subject})
    columns, rows = tuple(d[0] for d in cursor.description), tuple(cursor.fetchall())
    total = con.execute(f"SELECT count(*) FROM ({sql})", {"run_id": run, "subject": subject}).fetchall()[0][0]
    return columns, rows, total


@pytest.mark.parametrize(
    "order",
    [
        "dur DESC, start_ns",  # input columns, one of them not in the output
        "late DESC, start_ns",  # an output alias
        "3 DESC, 1",  # ordinals
        "dur * 2 DESC, start_ns",  # an expression
    ],
)
def test_each_finding_gets_its_rows_in_its_own_order(tasks, order):
    sql = (
        "SELECT start_ns, dur, start_ns - (SELECT min(start_ns) FROM t WHERE run_id = $run_id) AS late "
        f"FROM t WHERE run_id = $run_id AND op = $subject ORDER BY {order}"
    )
    keys = [(f"r{n}", f"op{m}") for n in range(3) for m in range(2)]
    got = evidence_of(tasks, sql, {}, keys, limit=4)
    assert set(got) == set(keys)
    for run, subject in keys:
        assert got[run, subject] == _alone(tasks, sql, run, subject, 4)


def test_a_finding_whose_rows_tie_is_left_to_its_own_query(tasks):
    sql = "SELECT op, dur FROM t WHERE run_id = $run_id AND op = $subject ORDER BY op, dur DESC"
    keys = [("r0", "op0"), ("r1", "op1")]
    assert set(evidence_of(tasks, sql, {}, keys, limit=3)) == set(keys)  # no tie among the rows kept
    sql = sql.replace("ORDER BY op, dur DESC", "ORDER BY op")
    assert evidence_of(tasks, sql, {}, keys, limit=3) == {}  # every row ties: the order would be DuckDB's choice


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT DISTINCT dur FROM t WHERE run_id = $run_id ORDER BY dur",
        "SELECT dur FROM t WHERE run_id = $run_id ORDER BY dur LIMIT 3",
        "SELECT dur FROM t WHERE run_id = $run_id",
        "SELECT dur AS start_ns, start_ns AS dur FROM t WHERE run_id = $run_id ORDER BY dur + 0",
        "SELECT dur FROM t WHERE run_id = $run_id UNION ALL SELECT 1 ORDER BY 1",
    ],
)
def test_queries_of_another_shape_are_asked_per_finding(tasks, sql):
    assert ordered(tasks, sql) is None
