"""A job's queries run on one DuckDB thread (job/fixed_order.py), whatever the connection's own thread count."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from analyzer.job.fixed_order import fixed_order, job_rows


@pytest.mark.parametrize("threads", [1, 3])
def test_fixed_order_leaves_the_connection_free_for_other_work_and_restores_its_threads(threads):
    """On a one-core machine DuckDB starts with one thread. Reading the setting with fetchone() left its
    result open there, and the next register() of the job tables failed with 'unfinished result'."""
    con = duckdb.connect(config={"threads": threads})
    with fixed_order(con):
        con.register("_ranks", pa.table({"rank": [0, 1], "wait_us": [0.1, 0.2]}))
        assert con.execute("SELECT current_setting('threads')").fetchall() == [(1,)]
        con.unregister("_ranks")
    assert con.execute("SELECT current_setting('threads')").fetchall() == [(threads,)]
    con.register("_ranks", pa.table({"rank": [0, 1], "wait_us": [0.1, 0.2]}))
    rows = job_rows(con, "SELECT $job AS job, sum(wait_us) AS wait_us FROM _ranks", "j")
    assert rows == [{"job": "j", "wait_us": pytest.approx(0.3)}]
