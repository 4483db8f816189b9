"""Rule queries run two at a time (rule_pool.py): both connections work, order, visibility, failures."""

from __future__ import annotations

import threading
import time

import duckdb
import pytest

from analyzer.ingest.database import connect
from analyzer.rule_engine.rule_pool import run_jobs
from analyzer.rule_engine.views import create_views


def _connection() -> duckdb.DuckDBPyConnection:
    con = connect()
    create_views(con)
    con.execute("CREATE TEMP VIEW only_on_con AS SELECT 42 AS answer")
    return con


def test_results_come_in_job_order_and_both_connections_run_jobs():
    con = _connection()
    both_busy = threading.Barrier(2, timeout=10)

    def job(n: int):
        def run(c: duckdb.DuckDBPyConnection):
            if n < 2:
                both_busy.wait()  # returns only when the two first jobs run at the same time
            return n, c.execute("SELECT count(*) FROM _busy_intervals").fetchall()[0][0], id(c)

        return run

    results = run_jobs(con, [job(n) for n in range(6)], [False] * 6)
    assert [r[:2] for r in results] == [(n, 0) for n in range(6)]
    assert len({r[2] for r in results}) == 2


def test_own_connection_jobs_see_what_only_the_callers_connection_has():
    con = _connection()
    jobs = [lambda c: c.execute("SELECT answer FROM only_on_con").fetchall()[0][0]] * 2
    jobs += [lambda c: c.execute("SELECT count(*) FROM _run_span").fetchall()[0][0]] * 3
    assert run_jobs(con, jobs, [True, True, False, False, False]) == [42, 42, 0, 0, 0]


def test_a_failing_job_raises_after_both_connections_stop():
    con = _connection()
    ran: list[int] = []

    def job(n: int):
        def run(c: duckdb.DuckDBPyConnection):
            ran.append(n)
            if n == 0:
                c.execute("SELECT * FROM no_such_table")
            time.sleep(0.05)
            return n

        return run

    with pytest.raises(duckdb.CatalogException):
        run_jobs(con, [job(n) for n in range(40)], [False] * 40)
    assert len(ran) <= 3  # the other connection stopped after the job it was running
    assert con.execute("SELECT answer FROM only_on_con").fetchall() == [(42,)]  # con still usable
