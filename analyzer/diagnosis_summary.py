"""The Diagnosis' summary numbers of many runs at once: span, computing share, time breakdown, steps, memory.

Each number is read with one query for all the runs (parameter ``$runs``) and split per run here, so that
judging a job of a thousand ranks costs a handful of queries, not a handful per rank.
"""

from __future__ import annotations

from typing import Any

import duckdb

from analyzer.diagnosis_memory import memory_summaries
from analyzer.diagnosis_model import BreakdownPart, RunSummary, TimeBreakdown
from analyzer.ingest.sql_values import IN_RUNS
from analyzer.rule_engine.runner import plain_value

# The run's whole window (window 0) of the time breakdown: read once for the summary and the breakdown.
_WHOLE_RUN = (
    "SELECT b.run_id, b.span_us, b.computing_us, b.computing_us / nullif(b.span_us, 0) AS computing_ratio, "
    "b.basis AS span_basis, b.source AS span_source, r.span_us AS task_range_us, b.subject, b.breakdown "
    f"FROM _time_breakdown b LEFT JOIN _run_span r ON r.run_id = b.run_id WHERE b.{IN_RUNS} AND b.window_no = 0"
)

_SHARES = (
    f"SELECT run_id, part, label, part_us, share_pct FROM _time_shares WHERE {IN_RUNS} AND window_no = 0 "
    "ORDER BY run_id, part_no"
)

# step_preparing_us: the time before a step's first task the export gives apart from the step: torch_npu's
# Preparing where step_trace_time decomposes the step (its Stage starts at the first task: _steps_decomposed),
# msprof's Data Aug Bound (its step starts at FP Start, the first task); summed as DECIMALs (exact, in any order).
_COUNTS = """
WITH runs AS (SELECT unnest($runs::VARCHAR[]) AS run_id)
SELECT runs.run_id, coalesce(s.n, 0) AS step_count, coalesce(o.n, 0) AS task_count,
       coalesce(c.n, 0) AS compute_task_count, round(s.preparing_us, 3) AS step_preparing_us
FROM runs LEFT JOIN (SELECT run_id, count(*) AS n,
                            avg(CASE WHEN decomposed THEN preparing_us
                                     ELSE data_aug_bound_us END::DECIMAL(38, 9))::DOUBLE AS preparing_us
                     FROM _steps_decomposed GROUP BY run_id) s USING (run_id)
LEFT JOIN (SELECT run_id, count(*) AS n FROM ops GROUP BY run_id) o USING (run_id)
LEFT JOIN (SELECT run_id, count(*) AS n FROM _compute_tasks GROUP BY run_id) c USING (run_id)
"""

_STEPS = (
    "SELECT run_id, min(computing_us / span_us) AS step_computing_ratio_min, "
    "median(computing_us / span_us) AS step_computing_ratio_median, "
    "arg_min(step_id, (computing_us / span_us, window_no)) AS step_computing_lowest_step "
    f"FROM _time_breakdown WHERE {IN_RUNS} AND window_no > 0 AND step_id IS NOT NULL "
    "GROUP BY run_id HAVING count(*) > 1"
)

# The RunSummary fields read from _WHOLE_RUN and from _STEPS.
_SPAN_FIELDS = ("span_us", "computing_us", "computing_ratio", "span_basis", "span_source", "task_range_us")
_STEP_FIELDS = ("step_computing_ratio_min", "step_computing_ratio_median", "step_computing_lowest_step")


def first_rows(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The first row of each run (first column ``run_id``, left out of the row) of a query over many runs,
    its values JSON-friendly (``plain_value``)."""
    cursor = con.execute(sql, params)
    columns = [d[0] for d in cursor.description][1:]
    first: dict[str, dict[str, Any]] = {}
    for run_id, *row in cursor.fetchall():
        if run_id not in first:
            first[run_id] = {c: plain_value(v) for c, v in zip(columns, row, strict=True)}
    return first


def _breakdowns(con: duckdb.DuckDBPyConnection, runs: list[str], whole: dict[str, dict[str, Any]]) -> dict:
    """Each run's time breakdown (all its steps together, else the profiled span); absent without device
    tasks (no row of ``_WHOLE_RUN``)."""
    parts: dict[str, list[BreakdownPart]] = {}
    for run_id, *part in con.execute(_SHARES, {"runs": runs}).fetchall():
        parts.setdefault(run_id, []).append(BreakdownPart(*part))
    return {
        r: TimeBreakdown(
            span_us=w["span_us"],
            basis=w["span_basis"],
            source=w["span_source"],
            subject=w["subject"],
            parts=tuple(parts.get(r, ())),
            text=w["breakdown"],
        )
        for r, w in whole.items()
    }


def run_summaries(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, RunSummary]:
    """Per run: span, computing time and share, the time breakdown, per-step computing shares, step and task
    counts, the host's time before each step's first task, the memory peak and who holds it (``memory``:
    analyzer/diagnosis_memory.py). Needs the helper views."""
    params = {"runs": run_ids}
    whole = first_rows(con, _WHOLE_RUN, params)
    breakdowns = _breakdowns(con, run_ids, whole)
    counts, steps = first_rows(con, _COUNTS, params), first_rows(con, _STEPS, params)
    memory = memory_summaries(con, run_ids)
    summaries = {}
    for r in run_ids:
        breakdown = breakdowns.get(r)
        computing = next((p for p in breakdown.parts if p.part == "computing"), None) if breakdown else None
        # None where the run has no device task (span) or fewer than two steps (per step)
        read = {**dict.fromkeys(_SPAN_FIELDS + _STEP_FIELDS), **whole.get(r, {}), **steps.get(r, {}), **counts[r]}
        summaries[r] = RunSummary(
            **{k: v for k, v in read.items() if k not in ("subject", "breakdown")},
            computing_pct=computing.pct if computing else None,  # as the breakdown prints it (parts add to 100.0%)
            breakdown=breakdown,
            memory=memory[r],
        )
    return summaries
