"""Step windows from the timeline's ProfilerStep#N markers, merged into steps (called from finalize).

A steps row that another reader already wrote for the same step (step_trace_time.csv's
decomposition, the DB's STEP_TIME) keeps its own window when it has one and gets the marker's
window when it has none; steps with no row yet get one with source 'timeline'.
"""

from __future__ import annotations

import duckdb

from analyzer.ingest.sql_values import IN_RUNS


def _markers(run: str = "", runs: str = "run_id = $run_id") -> str:
    """The step windows of the runs ``runs`` (a condition on run_id) selects, with ``run`` first."""
    return rf"""
    SELECT {run}device_id, TRY_CAST(regexp_extract(name, '^ProfilerStep#(\d+)', 1) AS BIGINT) AS step_id,
        min(start_ns) AS start_ns, max(end_ns) AS end_ns
    FROM timeline WHERE {runs} AND kind = 'step_marker'
    GROUP BY ALL HAVING step_id IS NOT NULL
"""


def _same_step(run: str = "$run_id") -> str:
    return (
        f"s.run_id = {run} AND s.step_id = m.step_id "
        "AND (s.device_id IS NULL OR m.device_id IS NULL OR s.device_id = m.device_id)"
    )


_SET_WINDOWS = (
    "UPDATE steps AS s SET start_ns = coalesce(s.start_ns, m.start_ns), end_ns = coalesce(s.end_ns, m.end_ns) "
)
_ADD_STEPS = (
    f"INSERT INTO steps BY NAME SELECT $run_id AS run_id, m.device_id, m.step_id, m.start_ns, m.end_ns, "
    f"'timeline' AS source FROM ({_markers()}) AS m "
    f"WHERE NOT EXISTS (SELECT 1 FROM steps s WHERE {_same_step()})"
)


def merge_step_markers(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Fill or add steps rows from the run's step markers (asked first: an export without framework
    events, such as msprof's, has none, and the two statements are long to plan)."""
    has_markers = "SELECT EXISTS (SELECT 1 FROM timeline WHERE run_id = $run_id AND kind = 'step_marker')"
    if not con.execute(has_markers, {"run_id": run_id}).fetchall()[0][0]:
        return
    con.execute(f"{_SET_WINDOWS}FROM ({_markers()}) AS m WHERE {_same_step()}", {"run_id": run_id})
    con.execute(_ADD_STEPS, {"run_id": run_id})


def merge_step_markers_of(con: duckdb.DuckDBPyConnection, runs: list[str]) -> None:
    """``merge_step_markers`` of each of ``runs`` (many runs read together): the windows filled in one
    statement for all of them; the steps only markers give are added run by run, as ``merge_step_markers``
    adds them (in the order its statement gives), to the few runs that have any."""
    markers = _markers("run_id, ", IN_RUNS)
    con.execute(f"{_SET_WINDOWS}FROM ({markers}) AS m WHERE s.{IN_RUNS} AND {_same_step('m.run_id')}", {"runs": runs})
    adding = con.execute(
        f"SELECT DISTINCT m.run_id FROM ({markers}) AS m "
        f"WHERE NOT EXISTS (SELECT 1 FROM steps s WHERE {_same_step('m.run_id')}) ORDER BY 1",
        {"runs": runs},
    ).fetchall()
    for (run_id,) in adding:
        con.execute(_ADD_STEPS, {"run_id": run_id})
