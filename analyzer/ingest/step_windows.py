"""Step windows from the timeline's ProfilerStep#N markers, merged into steps (called from finalize).

A steps row that another reader already wrote for the same step (step_trace_time.csv's
decomposition, the DB's STEP_TIME) keeps its own window when it has one and gets the marker's
window when it has none; steps with no row yet get one with source 'timeline'.
"""

from __future__ import annotations

import duckdb

_MARKERS = r"""
    SELECT device_id, TRY_CAST(regexp_extract(name, '^ProfilerStep#(\d+)', 1) AS BIGINT) AS step_id,
        min(start_ns) AS start_ns, max(end_ns) AS end_ns
    FROM timeline WHERE run_id = $run_id AND kind = 'step_marker'
    GROUP BY ALL HAVING step_id IS NOT NULL
"""
_SAME_STEP = (
    "s.run_id = $run_id AND s.step_id = m.step_id "
    "AND (s.device_id IS NULL OR m.device_id IS NULL OR s.device_id = m.device_id)"
)


def merge_step_markers(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Fill or add steps rows from the run's step markers (asked first: an export without framework
    events, such as msprof's, has none, and the two statements are long to plan)."""
    has_markers = "SELECT EXISTS (SELECT 1 FROM timeline WHERE run_id = $run_id AND kind = 'step_marker')"
    if not con.execute(has_markers, {"run_id": run_id}).fetchall()[0][0]:
        return
    con.execute(
        f"UPDATE steps AS s SET start_ns = coalesce(s.start_ns, m.start_ns), end_ns = coalesce(s.end_ns, m.end_ns) "
        f"FROM ({_MARKERS}) AS m WHERE {_SAME_STEP}",
        {"run_id": run_id},
    )
    con.execute(
        f"INSERT INTO steps BY NAME SELECT $run_id AS run_id, m.device_id, m.step_id, m.start_ns, m.end_ns, "
        f"'timeline' AS source FROM ({_MARKERS}) AS m "
        f"WHERE NOT EXISTS (SELECT 1 FROM steps s WHERE {_SAME_STEP})",
        {"run_id": run_id},
    )
