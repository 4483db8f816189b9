"""Diagnose runs: run the rules; gather metadata, summary numbers, outcomes, ranked findings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb

from analyzer.diagnosis_model import Diagnosis, RunsSummary, RunSummary
from analyzer.diagnosis_summary import first_rows, run_summaries
from analyzer.ingest.finalize import device_part_sql
from analyzer.ingest.sql_values import IN_RUNS
from analyzer.logs.links import failed_operators_of
from analyzer.rule_engine.chip_table import CHIP_KEY
from analyzer.rule_engine.impact_sharing import exclusive_impacts, impact_pools
from analyzer.rule_engine.model import ALL_RUNS, ConfiguredRules
from analyzer.rule_engine.ranking import rank_findings
from analyzer.rule_engine.runner import build_views, run_rules, run_rules_alone
from analyzer.rule_engine.set_query import split_by_run
from analyzer.version import __version__
from analyzer.vocabulary import PROFILE_SCOPES

# Ingest problems of each run (also those recorded before the run was split per device).
_PROBLEMS = f"""
WITH runs AS (SELECT unnest($runs::VARCHAR[]) AS run)
SELECT runs.run, file, location, severity, problem, hint
FROM runs JOIN ingest_problems p ON p.run_id = runs.run OR {device_part_sql("runs.run", "p.run_id")}
ORDER BY runs.run, CASE severity WHEN 'error' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, file, location, problem
"""


def _problems(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, tuple[dict[str, Any], ...]]:
    """Ingest problems of every run, one query for all."""
    cursor = con.execute(_PROBLEMS, {"runs": run_ids})
    columns = [d[0] for d in cursor.description][1:]
    found = split_by_run(cursor.fetchall(), run_ids)
    return {r: tuple(dict(zip(columns, row, strict=True)) for row in rows) for r, rows in found.items()}


def diagnose(con: duckdb.DuckDBPyConnection, run_id: str, configured: ConfiguredRules) -> Diagnosis:
    """The Diagnosis of one run: ``diagnose_many`` of that run alone."""
    return diagnose_many(con, [run_id], configured)[0]


def diagnose_many(
    con: duckdb.DuckDBPyConnection,
    run_ids: list[str],
    configured: ConfiguredRules,
    on_run: Callable[[str], None] | None = None,
) -> list[Diagnosis]:
    """The Diagnosis of each run, each as it is alone, judged in one pass: every rule and summary query
    runs once for all the runs, and the rows are split per run.

    Args:
        con: connection holding the normalized tables (the helper views are created in it).
        run_ids: the runs to diagnose (rows of ``runs``).
        configured: the validated rules with the user's overrides; rules of scope 'runs' are reported
            as skipped here; rules of the other scopes are left out (a job is judged once, analyzer/job/;
            dumps and logs by their own commands).
        on_run: called with each run id as its diagnosis is assembled (after the rules ran for all).

    Returns:
        per run (in ``run_ids`` order) its metadata, summary numbers, one outcome per rule, ranked findings.
    """
    configured = configured.where(lambda r: r.scope in PROFILE_SCOPES)
    build_views(con, configured)  # every helper: the summaries and the impact pools read them too
    judged = run_rules_alone(con, configured, list(run_ids), views_built=True)
    read = _Read(con, run_ids, {f.run_id for found, _ in judged.values() for f in found})
    rules = list(configured.rules)
    in_effect = configured.params_in_effect()
    rule_reports = {rule.name: rule.report for rule in rules}
    diagnoses = []
    for r in run_ids:
        if on_run:
            on_run(r)
        findings, outcomes = judged[r]
        effective = {**in_effect, CHIP_KEY: read.nominal.get(r, {})}
        diagnoses.append(
            Diagnosis(
                run_id=r,
                run=read.runs.get(r, {}),
                summary=read.summaries[r],
                outcomes=tuple(outcomes),
                findings=tuple(rank_findings(exclusive_impacts(con, findings, rules, read.pools))),
                problems=read.problems[r],
                params=effective,
                tool_version=__version__,
                rule_reports=dict(rule_reports),
                failed_operators=read.failed[r],
            )
        )
    return diagnoses


class _Read:
    """What the diagnoses of ``run_ids`` read besides the rules, one query each for all the runs;
    ``found_runs``: the runs the findings are about (their pools of time)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, run_ids: list[str], found_runs: set[str]) -> None:
        runs = {"runs": list(run_ids)}
        self.nominal = first_rows(con, f"SELECT run_id, * EXCLUDE (run_id) FROM _run_nominal WHERE {IN_RUNS}", runs)
        self.runs = first_rows(con, f"SELECT run_id AS __run, * EXCLUDE (fingerprint) FROM runs WHERE {IN_RUNS}", runs)
        self.summaries: dict[str, RunSummary] = run_summaries(con, list(run_ids))
        self.problems = _problems(con, list(run_ids))
        self.failed = failed_operators_of(con, list(run_ids))
        self.pools = impact_pools(con, found_runs)


def diagnose_runs(
    con: duckdb.DuckDBPyConnection, run_ids: list[str], configured: ConfiguredRules, *, views_built: bool = False
) -> Diagnosis | None:
    """The all-runs Diagnosis: the rules of scope 'runs' over several runs (batch-size scaling); ``views_built``:
    as for ``run_rules``.

    Returns None when fewer than two runs or no such rule are given, and when none of those rules
    has a finding or failed: skipped (e.g. no run records a batch size) or with nothing to compare
    (no model at two batch sizes), there is nothing about several runs to report.
    """
    several = configured.where(lambda r: r.scope == "runs")
    if len(run_ids) < 2 or not several.rules:
        return None
    findings, outcomes = run_rules(con, several, list(run_ids), views_built=views_built)
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
