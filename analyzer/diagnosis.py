"""Diagnose one run: run the rules; gather metadata, summary numbers, outcomes, ranked findings."""

from __future__ import annotations

import math
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import duckdb

from analyzer import __version__
from analyzer.report.model import Diagnosis
from analyzer.rule_engine.model import Rule
from analyzer.rule_engine.ranking import rank_findings
from analyzer.rule_engine.runner import effective_params, run_rules


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _one_row(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> dict[str, Any]:
    cursor = con.execute(sql, params)
    columns = [d[0] for d in cursor.description]
    rows = cursor.fetchall()
    return {c: _plain(v) for c, v in zip(columns, rows[0], strict=True)} if rows else {}


def run_summary(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, Any]:
    """span, busy time and ratio, span source, step and task counts of one run (needs the views)."""
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
    return {
        "span_us": None,
        "busy_us": None,
        "busy_ratio": None,
        "span_source": None,
        **summary,
        **counts,
    }


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
    run = _one_row(con, "SELECT * EXCLUDE (fingerprint) FROM runs WHERE run_id = ?", [run_id])
    return Diagnosis(
        run_id=run_id,
        run=run,
        summary=run_summary(con, run_id),
        outcomes=tuple(outcomes),
        findings=tuple(rank_findings(findings)),
        problems=run_problems(con, run_id),
        params={r.name: effective_params(r, params) for r in rules if r.params},
        tool_version=__version__,
    )
