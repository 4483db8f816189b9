"""A run's time breakdown, per-step breakdown and per-operator-type time as polars frames, read from the
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


def _views(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """``con`` with the helper views: those a diagnosis made, else made now (as a diagnosis makes them)."""
    made = con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = '_time_shares'")
    if not made.fetchall()[0][0]:
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
