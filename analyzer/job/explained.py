"""A job finding explains its ranks' findings (the job rules' [explains]): which ones, and how they read then."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

import duckdb

from analyzer.diagnosis_model import Diagnosis, RunSummary, job_summary
from analyzer.rule_engine.message_format import fill_template
from analyzer.rule_engine.model import ExplainedBy, Explanation, Finding, Rule
from analyzer.rule_engine.ranking import rank_findings
from analyzer.rule_engine.runner import bind_params
from analyzer.rule_engine.validation import FINDING_FIELDS


def _note(rule: Rule, finding: Finding, params: dict[str, Any]) -> str:
    """The note with the job finding's fields, details and params; a template that does not fit them (a user's
    rule that `rules check` did not see) gives the job finding's subject, as the runner does for messages."""
    try:
        fields = {k: getattr(finding, k) for k in FINDING_FIELDS}
        return fill_template(rule.explains.note, {**params, **finding.details, **fields})
    except (KeyError, ValueError, TypeError, IndexError, AttributeError):
        return finding.subject


def _explained_rows(con: duckdb.DuckDBPyConnection, rule: Rule, values: dict[str, Any]) -> tuple[list[str], list]:
    """The columns and rows of the rule's [explains] query; none when it fails (a user's rule, checked only by
    `rules check`): the ranks' findings then stay as they are."""
    try:
        cursor = con.execute(rule.explains.sql, bind_params(rule.explains.sql, values))
        return [d[0] for d in cursor.description], cursor.fetchall()
    except (duckdb.Error, ValueError):
        return [], []


def _explanation(con: duckdb.DuckDBPyConnection, job: Diagnosis, rule: Rule, f: Finding, context: dict) -> Explanation:
    """What the job finding ``f`` explains: the rank runs its rule's [explains] query returns and, from its
    second column, the time per job step the cause costs each (a one-column query: whole findings)."""
    params = job.params.get(rule.name, {})
    values = {**params, "run_id": job.run_id, "subject": f.subject, "impact_us": f.impact_us}
    columns, rows = _explained_rows(con, rule, values)
    runs = context["runs"]
    by = ExplainedBy(f.code, f.rule, f.subject, _note(rule, f, params), "")
    if columns != ["rank", "explained_us"]:  # ranks alone: whole findings; other columns (`rules check`): none
        ranks = [r for (r,) in rows] if columns == ["rank"] else []
        return Explanation(by, rule.explains.categories, tuple(runs[r] for r in ranks if r in runs))
    # A user's query may return a value that is no time (text, NULL): that rank is not explained, as when it fails
    costs = {runs[r]: float(us) for r, us in rows if r in runs and isinstance(us, (int, float, Decimal)) and us > 0}
    return Explanation(by, rule.explains.categories, tuple(costs), costs, context["waits"], context["steps"])


def job_explanations(con: duckdb.DuckDBPyConnection, job: Diagnosis, rules: Sequence[Rule]) -> tuple[Explanation, ...]:
    """For each finding of the job whose rule has an [explains] table: the rank runs it explains (the ranks its
    query returns that hold per-task data: runs of their own), how much of each, and the note they get. Needs
    the job's tables."""
    explaining = {r.name: r for r in rules if r.explains.sql}
    context = {
        "runs": {r["rank"]: r["rank_run_id"] for r in _ranks_with_runs(job)},
        "waits": rule_waits(rules),
        "steps": int(job_summary(job.summary).get("step_count") or 0),
    }
    return tuple(_explanation(con, job, explaining[f.rule], f, context) for f in job.findings if f.rule in explaining)


def rule_waits(rules: Sequence[Rule]) -> dict[str, tuple[str, str]]:
    """Per rank rule whose [impact] says what its amount waits on: that, and the rule's polarity."""
    return {r.name: (r.impact_waits, r.polarity) for r in rules if r.impact_waits}


def explained_amount(f: Finding) -> float:
    """The amount of ``f`` a job finding's part is taken off: its impact before impacts were shared."""
    return float(f.details.get("impact_before_overlap_us", f.impact_us))


def is_rank(run_id: str, rank_runs: Collection[str]) -> bool:
    """True when the run is one of the rank exports (or a device of one: 'source/dev1')."""
    return _rank_run(run_id, rank_runs) is not None


def _ranks_with_runs(job: Diagnosis) -> list[dict[str, Any]]:
    return [r for r in job.run.get("ranks") or [] if r.get("rank_run_id") and r.get("has_kernels")]


def rank_runs(job: Diagnosis) -> tuple[str, ...]:
    """The run ids of the job's ranks that hold per-task data (each judged as a run of its own)."""
    return tuple(r["rank_run_id"] for r in _ranks_with_runs(job))


def _rank_run(run_id: str, rank_runs: Collection[str]) -> str | None:
    """The rank run a run is (itself, or the rank export of a device run 'source/dev1'); None if neither."""
    source = run_id.rpartition("/dev")[0]
    return run_id if run_id in rank_runs else source if source in rank_runs else None


def _still_fires(f: Finding, polarity: str, amount: float, wait: float, span: float | None) -> bool:
    """Whether the finding, judged again with the wait taken off its amount and its span, would still fire:
    its value is its amount's share of the span (higher_is_better: the rest's share) against its threshold.
    Without a threshold or a span: when its own part is at least the wait."""
    if f.threshold is None or not span or span - wait <= 0:
        return amount - wait >= wait
    if polarity == "higher_is_better":
        return (span - amount) / (span - wait) < f.threshold
    return (amount - wait) / (span - wait) > f.threshold


def span_basis(summary: object) -> tuple[int, float | None]:
    """What the part a job finding explains is measured against: the run's steps (0 when its span is not its
    steps) and its span (None: ``summary`` is no run's RunSummary)."""
    if not isinstance(summary, RunSummary):
        return 0, None
    return (summary.step_count if summary.span_basis == "steps" else 0), summary.span_us


def _part_explained(f: Finding, e: Explanation, cost_us: float, basis: tuple[int, float | None]) -> Finding:
    """The finding with the part of it the job cause costs (``cost_us`` per job step) marked: 'info' when what
    is left would not fire on its own, else its severity kept and its impact what is left (``basis``: the
    run's ``span_basis``)."""
    waits, polarity = e.waits[f.rule]
    steps, span = basis
    amount = explained_amount(f)
    wait = min(cost_us * (steps or max(e.job_steps, 1)), amount)
    partial = _still_fires(f, polarity, amount, wait, span)
    per, unit = ("per step", steps * 1000.0) if steps else ("in the profiled span", 1000.0)
    shown, of = round(wait / unit, 1), round(amount / unit, 1)
    by = replace(e.by, severity=f.severity, explained_ms=shown, amount_ms=of, own_ms=round(of - shown, 1))
    by = replace(by, per=per, waits=waits, partial=partial)
    if not partial:
        return replace(f, severity="info", explained_by=by)
    left = round(min(f.impact_us, amount - wait), 3)
    share = f.span_share if not span else left / span
    details = {**f.details, "impact_before_explained_us": f.impact_us}
    return replace(f, impact_us=left, span_share=share, details=details, explained_by=by)


def _explained(f: Finding, explanations: Sequence[Explanation], basis: tuple[int, float | None]) -> Finding:
    """The finding with the note of the first explanation that covers it: a one-column one makes it 'info'
    (its severity kept in the note); one with amounts explains the part it covers (``_part_explained``)."""
    for e in explanations:
        if f.explained_by is not None or f.category not in e.categories:
            continue
        if (run := _rank_run(f.run_id, e.run_id_set)) is None:
            continue
        if e.explained_us is None:
            return replace(f, severity="info", explained_by=replace(e.by, severity=f.severity))
        if f.rule in e.waits:
            return _part_explained(f, e, e.explained_us[run], basis)
    return f


def explained_findings(
    findings: Sequence[Finding], explanations: Sequence[Explanation], basis: tuple[int, float | None]
) -> list[Finding] | None:
    """A run's findings (``basis``: its ``span_basis``) with those its jobs' findings explain marked (ranked
    last) or partly explained (ranked by what is left), ranked again; None when none is."""
    found = [_explained(f, explanations, basis) for f in findings]
    if all(a is b for a, b in zip(found, findings, strict=True)):
        return None
    return rank_findings(found)


def explain_findings(d: Diagnosis, explanations: Sequence[Explanation]) -> Diagnosis:
    """The run's Diagnosis with the findings its jobs' findings explain marked (ranked last) or partly
    explained (ranked by what is left); the same object when none is."""
    found = explained_findings(d.findings, explanations, span_basis(d.summary))  # a rank's run has a RunSummary
    return d if found is None else replace(d, findings=tuple(found))
