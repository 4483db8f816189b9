"""A run's time breakdown, per-step breakdown and per-operator-type and -family time as polars frames, read from the
helper views the rules judge (rule_engine/views: breakdown.sql, tasks.sql), never computed again here."""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb

from analyzer.rule_engine.views import create_views

if TYPE_CHECKING:
    import polars as pl

_BREAKDOWN = """
SELECT part, label, part_us, share_pct FROM _time_shares WHERE run_id = $run AND window_no = 0 ORDER BY part_no
"""
_STEPS = """
SELECT * EXCLUDE (run_id) FROM _time_breakdown WHERE run_id = $run AND window_no > 0 ORDER BY window_no
"""
_OP_TYPES = """
SELECT device_id, op_type, busy_us, task_count FROM _op_type_busy WHERE run_id = $run
ORDER BY device_id, busy_us DESC, op_type NULLS LAST
"""

_OP_FAMILIES = """
SELECT op_family, op_type, count(*) AS task_count, sum(dur_us) AS total_us, avg(dur_us) AS mean_us,
       max(dur_us) AS max_us
FROM _compute_tasks WHERE run_id = $run
GROUP BY op_family, op_type ORDER BY total_us DESC NULLS LAST, op_family NULLS LAST
"""


def _views(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """``con`` with every helper view: those made before kept while the tables are unchanged (create_views),
    the others made now (run_rules may have made only its rules' helpers)."""
    create_views(con)
    return con


def breakdown(con: duckdb.DuckDBPyConnection, run_id: str) -> pl.DataFrame:
    """The run's whole-run time breakdown, a row per part (its shares add up to exactly 100.0)."""
    return _views(con).sql(_BREAKDOWN, params={"run": run_id}).pl()


def steps(con: duckdb.DuckDBPyConnection, run_id: str) -> pl.DataFrame:
    """The breakdown of each step (or of the profiled span), a row per window and a column per part."""
    return _views(con).sql(_STEPS, params={"run": run_id}).pl()


def op_types(con: duckdb.DuckDBPyConnection, run_id: str) -> pl.DataFrame:
    """Per device and operator type: the device time when one of its compute tasks ran (overlaps once) and
    its task count, longest first."""
    return _views(con).sql(_OP_TYPES, params={"run": run_id}).pl()


def op_families(con: duckdb.DuckDBPyConnection, run_id: str) -> pl.DataFrame:
    """Per operator family (type + input shapes, the rules' ``_tasks.op_family``): its compute tasks and their
    summed, mean and longest device time, most time first."""
    return _views(con).sql(_OP_FAMILIES, params={"run": run_id}).pl()
