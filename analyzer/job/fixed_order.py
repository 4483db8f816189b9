"""Run a job's queries on one DuckDB thread, so that every float sum adds its terms in the same order.

Parallel aggregation hands rows to threads in whatever order they come free, and a sum of floats
depends on the order of its terms in its last digits: two identical runs would then write job numbers
(impacts, per-rank waits) that differ. The job tables are small summaries, so one thread costs little
and makes every aggregate of the job, the rules' included, the same run after run.

The rounding of rule numbers (rule_engine/runner.py ``_number``) does not do this job: it covers
only what rules return, not the job summary, the job page's per-rank chart values or the catalog's
job metrics, which would otherwise change in their last digits from one run to the next. A run's
own tables are large and need DuckDB's threads, so there the rounding is the one mechanism.
"""

from __future__ import annotations

from typing import Any

import duckdb

from analyzer.duckdb_connect import fixed_order
from analyzer.rule_engine.runner import plain_value


def job_rows(con: duckdb.DuckDBPyConnection, sql: str, job_id: str) -> list[dict[str, Any]]:
    """The rows of a query over one job's tables (``$job`` bound to ``job_id``), run on one thread,
    as dicts of JSON-friendly values."""
    with fixed_order(con):
        cursor = con.execute(sql, {"job": job_id})
        columns = [d[0] for d in cursor.description]
        return [{c: plain_value(v) for c, v in zip(columns, row, strict=True)} for row in cursor.fetchall()]
