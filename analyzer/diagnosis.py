"""Diagnose one run: run the rules; gather metadata, summary numbers, outcomes, ranked findings."""

from __future__ import annotations

from typing import Any

import duckdb

from analyzer.diagnosis_memory import memory_summary
from analyzer.diagnosis_model import BreakdownPart, Diagnosis, RunsSummary, RunSummary, TimeBreakdown
from analyzer.logs.links import failed_operators
from analyzer.rule_engine.chip_table import CHIP_KEY
from analyzer.rule_engine.impact_sharing import exclusive_impacts
from analyzer.rule_engine.model import ALL_RUNS, ConfiguredRules
from analyzer.rule_engine.ranking import rank_findings
from analyzer.rule_engine.runner import plain_value, run_rules
from analyzer.version import __version__
from analyzer.vocabulary import PROFILE_SCOPES


def _one_row(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | dict[str, Any]) -> dict[str, Any]:
    cursor = con.execute(sql, params)
    columns = [d[0] for d in cursor.description]
    rows = cursor.fetchall()
    return {c: plain_value(v) for c, v in zip(columns, rows[0], strict=True)} if rows else {}


# The run's whole window (window 0) of the time breakdown: read once for the summary and the breakdown.
_WHOLE_RUN = (
    "SELECT b.span_us, b.computing_us, b.computing_us / nullif(b.span_us, 0) AS computing_ratio, "
    "b.basis AS span_basis, b.source AS span_source, r.span_us AS task_range_us, b.subject, b.breakdown "
    "FROM _time_breakdown b LEFT JOIN _run_span r ON r.run_id = b.run_id WHERE b.run_id = ? AND b.window_no = 0"
)


# The RunSummary fields read from _WHOLE_RUN and from the per-step query of run_summary.
_SPAN_FIELDS = ("span_us", "computing_us", "computing_ratio", "span_basis", "span_source", "task_range_us")
_STEP_FIELDS = ("step_computing_ratio_min", "step_computing_ratio_median", "step_computing_lowest_step")


def time_breakdown(con: duckdb.DuckDBPyConnection, run_id: str, whole: dict[str, Any]) -> TimeBreakdown | None:
    """The run's time breakdown (all its steps together, else the profiled span); None without device
    tasks. ``whole``: the run's row of ``_WHOLE_RUN`` ({} when it has none). Needs the helper views."""
    if not whole:
        return None
    parts = con.execute(
        "SELECT part, label, part_us, share_pct FROM _time_shares WHERE run_id = ? AND window_no = 0 ORDER BY part_no",
        [run_id],
    ).fetchall()
    return TimeBreakdown(
        span_us=whole["span_us"],
        basis=whole["span_basis"],
        source=whole["span_source"],
        subject=whole["subject"],
        parts=tuple(BreakdownPart(p, label, us, pct) for p, label, us, pct in parts),
        text=whole["breakdown"],
    )


def run_summary(con: duckdb.DuckDBPyConnection, run_id: str) -> RunSummary:
    """span, computing time and share, the time breakdown, per-step computing shares, step and task counts,
    the memory peak and who holds it (``memory``: analyzer/diagnosis_memory.py). Needs the helper views."""
    whole = _one_row(con, _WHOLE_RUN, [run_id])
    breakdown = time_breakdown(con, run_id, whole)
    counts = _one_row(
        con,
        "SELECT (SELECT count(*) FROM steps WHERE run_id = $r) AS step_count, "
        "(SELECT count(*) FROM ops WHERE run_id = $r) AS task_count, "
        "(SELECT count(*) FROM _compute_tasks WHERE run_id = $r) AS compute_task_count",
        {"r": run_id},
    )
    steps = _one_row(
        con,
        "SELECT min(computing_us / span_us) AS step_computing_ratio_min, "
        "median(computing_us / span_us) AS step_computing_ratio_median, "
        "arg_min(step_id, (computing_us / span_us, window_no)) AS step_computing_lowest_step "
        "FROM _time_breakdown WHERE run_id = ? AND window_no > 0 AND step_id IS NOT NULL HAVING count(*) > 1",
        [run_id],
    )
    computing = next((p for p in breakdown.parts if p.part == "computing"), None) if breakdown else None
    # None where the run has no device task (span) or fewer than two steps (per step)
    read = {**dict.fromkeys(_SPAN_FIELDS + _STEP_FIELDS), **whole, **steps, **counts}
    return RunSummary(
        **{k: v for k, v in read.items() if k not in ("subject", "breakdown")},
        computing_pct=computing.pct if computing else None,  # as the breakdown prints it (parts add up to 100.0%)
        breakdown=breakdown,
        memory=memory_summary(con, run_id),
    )


def step_computing_text(summary: RunSummary) -> str | None:
    """The spread of the computing share over several steps, as one phrase; None with fewer than two steps."""
    low = summary.step_computing_ratio_min
    if low is None:
        return None
    return (
        f"per step: lowest {low:.1%} (step {summary.step_computing_lowest_step}), "
        f"median {summary.step_computing_ratio_median or 0:.1%}"
    )


def run_problems(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[dict[str, Any], ...]:
    """Ingest problems of the run (also those recorded before the run was split per device)."""
    cursor = con.execute(
        "SELECT file, location, severity, problem, hint FROM ingest_problems "
        "WHERE run_id = $r OR starts_with($r, run_id || '/dev') "
        "ORDER BY CASE severity WHEN 'error' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, "
        "file, location, problem",
        {"r": run_id},
    )
    columns = [d[0] for d in cursor.description]
    return tuple(dict(zip(columns, row, strict=True)) for row in cursor.fetchall())


def diagnose(con: duckdb.DuckDBPyConnection, run_id: str, configured: ConfiguredRules) -> Diagnosis:
    """The Diagnosis of one run.

    Args:
        con: connection holding the normalized tables (the helper views are created in it).
        run_id: the run to diagnose (a row of ``runs``).
        configured: the validated rules with the user's overrides; rules of scope 'runs' are reported
            as skipped here; rules of the other scopes are left out (a job is judged once, analyzer/job/;
            dumps and logs by their own commands).

    Returns:
        Diagnosis with the run's metadata, summary numbers, one outcome per rule, ranked findings.
    """
    configured = configured.where(lambda r: r.scope in PROFILE_SCOPES)
    findings, outcomes = run_rules(con, configured, [run_id])
    effective = configured.params_in_effect()
    effective[CHIP_KEY] = _one_row(con, "SELECT * EXCLUDE (run_id) FROM _run_nominal WHERE run_id = ?", [run_id])
    findings = exclusive_impacts(con, findings, list(configured.rules))
    run = _one_row(con, "SELECT * EXCLUDE (fingerprint) FROM runs WHERE run_id = ?", [run_id])
    return Diagnosis(
        run_id=run_id,
        run=run,
        summary=run_summary(con, run_id),
        outcomes=tuple(outcomes),
        findings=tuple(rank_findings(findings)),
        problems=run_problems(con, run_id),
        params=effective,
        tool_version=__version__,
        rule_reports={r.name: r.report for r in configured.rules},
        failed_operators=failed_operators(con, run_id),
    )


def diagnose_runs(con: duckdb.DuckDBPyConnection, run_ids: list[str], configured: ConfiguredRules) -> Diagnosis | None:
    """The all-runs Diagnosis: the rules of scope 'runs' over several runs (batch-size scaling).

    Returns None when fewer than two runs or no such rule are given, and when none of those rules
    has a finding or failed: skipped (e.g. no run records a batch size) or with nothing to compare
    (no model at two batch sizes), there is nothing about several runs to report.
    """
    several = configured.where(lambda r: r.scope == "runs")
    if len(run_ids) < 2 or not several.rules:
        return None
    findings, outcomes = run_rules(con, several, list(run_ids))
    if not findings and all(o.status != "failed" for o in outcomes):
        return None
    return Diagnosis(
        run_id=ALL_RUNS,
        run={"runs": list(run_ids)},
        summary=RunsSummary(run_count=len(run_ids)),
        outcomes=tuple(outcomes),
        findings=tuple(rank_findings(findings)),
        params=several.params_in_effect(),
        tool_version=__version__,
        rule_reports={r.name: r.report for r in several.rules},
    )
