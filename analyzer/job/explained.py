"""A job finding explains its ranks' findings (the job rules' [explains]): which ones, and how they read then."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

import duckdb

from analyzer.diagnosis_model import Diagnosis
from analyzer.rule_engine.model import ExplainedBy, Explanation, Finding, Rule
from analyzer.rule_engine.ranking import rank_findings
from analyzer.rule_engine.runner import bind_params
from analyzer.rule_engine.validation import FINDING_FIELDS


def _note(rule: Rule, finding: Finding, params: dict[str, Any]) -> str:
    """The note with the job finding's fields, details and params; a template that does not fit them (a user's
    rule that `rules check` did not see) gives the job finding's subject, as the runner does for messages."""
    try:
        fields = {k: getattr(finding, k) for k in FINDING_FIELDS}
        return rule.explains.note.format(**{**params, **finding.details, **fields})
    except (KeyError, ValueError, TypeError, IndexError, AttributeError):
        return finding.subject


def _explained_ranks(con: duckdb.DuckDBPyConnection, rule: Rule, values: dict[str, Any]) -> list[int]:
    """The ranks the rule's [explains] query returns; none when it fails (a user's rule, checked only by
    `rules check`): the ranks' findings then stay as they are."""
    try:
        return [r for (r,) in con.execute(rule.explains.sql, bind_params(rule.explains.sql, values)).fetchall()]
    except (duckdb.Error, ValueError):
        return []


def job_explanations(con: duckdb.DuckDBPyConnection, job: Diagnosis, rules: Sequence[Rule]) -> tuple[Explanation, ...]:
    """For each finding of the job whose rule has an [explains] table: the rank runs it explains (the ranks its
    query returns that hold per-task data: runs of their own) and the note they get. Needs the job's tables."""
    explaining = {r.name: r for r in rules if r.explains.sql}
    runs = {r["rank"]: r["rank_run_id"] for r in _ranks_with_runs(job)}
    found = []
    for f in job.findings:
        rule = explaining.get(f.rule)
        if rule is None:
            continue
        params = job.params.get(rule.name, {})
        values = {**params, "run_id": job.run_id, "subject": f.subject}
        ranks = _explained_ranks(con, rule, values)
        by = ExplainedBy(f.code, f.rule, f.subject, _note(rule, f, params), "")
        found.append(Explanation(by, rule.explains.categories, tuple(runs[r] for r in ranks if r in runs)))
    return tuple(found)


def is_rank(run_id: str, rank_runs: Collection[str]) -> bool:
    """True when the run is one of the rank exports (or a device of one: 'source/dev1')."""
    return run_id in rank_runs or run_id.rpartition("/dev")[0] in rank_runs


def _ranks_with_runs(job: Diagnosis) -> list[dict[str, Any]]:
    return [r for r in job.run.get("ranks") or [] if r.get("rank_run_id") and r.get("has_kernels")]


def rank_runs(job: Diagnosis) -> tuple[str, ...]:
    """The run ids of the job's ranks that hold per-task data (each judged as a run of its own)."""
    return tuple(r["rank_run_id"] for r in _ranks_with_runs(job))


def _explained(f: Finding, explanations: Sequence[Explanation]) -> Finding:
    """The finding, 'info' with the note of the first explanation that covers it (its severity kept in the note)."""
    for e in explanations:
        if f.explained_by is None and f.category in e.categories and is_rank(f.run_id, e.run_id_set):
            return replace(f, severity="info", explained_by=replace(e.by, severity=f.severity))
    return f


def explain_findings(d: Diagnosis, explanations: Sequence[Explanation]) -> Diagnosis:
    """The run's Diagnosis with the findings its jobs' findings explain marked and ranked last; the same
    object when none is."""
    findings = [_explained(f, explanations) for f in d.findings]
    if all(a is b for a, b in zip(findings, d.findings, strict=True)):
        return d
    return replace(d, findings=tuple(rank_findings(findings)))
