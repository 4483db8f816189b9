"""Diagnose one run: run the rules; gather metadata, summary numbers, outcomes, ranked findings."""

from __future__ import annotations

from typing import Any

import duckdb

from analyzer import __version__
from analyzer.report.model import ALL_RUNS_ID, Diagnosis
from analyzer.rule_engine.model import Rule
from analyzer.rule_engine.overlap import exclusive_impacts
from analyzer.rule_engine.ranking import rank_findings
from analyzer.rule_engine.runner import effective_params, plain_value, run_rules


def _one_row(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> dict[str, Any]:
    cursor = con.execute(sql, params)
    columns = [d[0] for d in cursor.description]
    rows = cursor.fetchall()
    return {c: plain_value(v) for c, v in zip(columns, rows[0], strict=True)} if rows else {}


def run_summary(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, Any]:
    """span, busy time and ratio, per-step busy ratios, span source, step and task counts.

    Needs the helper views. ``busy_ratio`` is over the whole profiled span (_run_busy);
    ``step_busy_*`` are per step with the
    rules' definition (_step_busy: the export's step decomposition when present), so the summary and
    the low-aicore-utilization finding quote the same numbers.
    """
    summary = _one_row(
        con,
        "SELECT s.span_us, b.busy_us, b.busy_ratio, s.span_source FROM _run_span s "
        "JOIN _run_busy b ON b.run_id = s.run_id WHERE s.run_id = ?",
        [run_id],
    )
    counts = _one_row(
        con,
        "SELECT (SELECT count(*) FROM steps WHERE run_id = $r) AS step_count, "
        "(SELECT count(*) FROM ops WHERE run_id = $r) AS task_count, "
        "(SELECT count(*) FROM _compute_tasks WHERE run_id = $r) AS compute_task_count",
        {"r": run_id},
    )  # type: ignore[arg-type]
    steps = _one_row(
        con,
        "SELECT min(busy_ratio) AS step_busy_ratio_min, "
        "median(busy_ratio) AS step_busy_ratio_median, "
        "arg_min(step_id, (busy_ratio, step_id)) AS step_busy_lowest_step, "
        "arg_min(basis, (busy_ratio, step_id)) AS step_busy_basis "
        "FROM _step_busy WHERE run_id = ? HAVING count(*) > 0",
        [run_id],
    )
    return {
        "span_us": None,
        "busy_us": None,
        "busy_ratio": None,
        "span_source": None,
        "step_busy_ratio_min": None,
        "step_busy_ratio_median": None,
        "step_busy_lowest_step": None,
        "step_busy_basis": None,
        **summary,
        **steps,
        **counts,
    }


def step_busy_text(summary: dict[str, Any]) -> str | None:
    """The per-step busy ratio the rules judge, as one labelled phrase; None without steps.

    >>> step_busy_text({"step_busy_ratio_min": 0.065, "step_busy_ratio_median": 0.07,
    ...                 "step_busy_lowest_step": 50, "step_busy_basis": "step decomposition"})
    'per step (step decomposition): lowest 6.5% (step 50), median 7.0%'
    """
    low = summary.get("step_busy_ratio_min")
    if low is None:
        return None
    return (
        f"per step ({summary.get('step_busy_basis')}): lowest {low:.1%} "
        f"(step {summary.get('step_busy_lowest_step')}), "
        f"median {summary.get('step_busy_ratio_median') or 0:.1%}"
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


def diagnose(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    rules: list[Rule],
    params: dict[str, dict[str, Any]] | None = None,
    *,
    preview: bool = False,
) -> Diagnosis:
    """The Diagnosis of one run.

    Args:
        con: connection holding the normalized tables (the helper views are created in it).
        run_id: the run to diagnose (a row of ``runs``).
        rules: loaded, validated rules; rules of scope 'runs' are reported as skipped here.
        params: user overrides, rule name -> {param: value}.
        preview: also run 'preview' rules.

    Returns:
        Diagnosis with the run's metadata, summary numbers, one outcome per rule, ranked findings.
    """
    findings, outcomes = run_rules(con, rules, [run_id], params, preview=preview)
    effective = {r.name: effective_params(r, params) for r in rules if r.params}
    findings = exclusive_impacts(con, findings, effective)
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
        rule_reports={r.name: r.report for r in rules},
    )


def diagnose_runs(
    con: duckdb.DuckDBPyConnection,
    run_ids: list[str],
    rules: list[Rule],
    params: dict[str, dict[str, Any]] | None = None,
    *,
    preview: bool = False,
) -> Diagnosis | None:
    """The all-runs Diagnosis: the rules of scope 'runs' over several runs (batch-size-scaling).

    Returns None when fewer than two runs or no such rule are given, and when none of those rules
    has a finding or failed: skipped (e.g. no run records a batch size) or with nothing to compare
    (no model at two batch sizes), there is nothing about several runs to report.
    """
    several = [r for r in rules if r.scope == "runs"]
    if len(run_ids) < 2 or not several:
        return None
    findings, outcomes = run_rules(con, several, list(run_ids), params, preview=preview)
    if not findings and all(o.status != "failed" for o in outcomes):
        return None
    return Diagnosis(
        run_id=ALL_RUNS_ID,
        run={"runs": list(run_ids)},
        summary={"run_count": len(run_ids)},
        outcomes=tuple(outcomes),
        findings=tuple(rank_findings(findings)),
        params={r.name: effective_params(r, params) for r in several if r.params},
        tool_version=__version__,
        rule_reports={r.name: r.report for r in several},
    )
