"""Diagnose a Trace: one run, every run (then the rules comparing them), every job, or all of it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from analyzer.api.rule_sets import configured
from analyzer.api.trace import Trace
from analyzer.diagnosis import diagnose as diagnose_run
from analyzer.diagnosis import diagnose_many
from analyzer.diagnosis import diagnose_runs as diagnose_together
from analyzer.diagnosis_model import Diagnosis
from analyzer.job.diagnosis import diagnose_job, judge_jobs
from analyzer.job.explained import explain_findings
from analyzer.rule_engine.model import ConfiguredRules, Rule

Params = dict[str, dict[str, Any]]


def diagnose(
    trace: Trace,
    run_id: str | None = None,
    *,
    rule_set: list[Rule] | None = None,
    params: Params | None = None,
    preview: bool = False,
) -> Diagnosis:
    """The ranked diagnosis of one run (``run_id``, or the only usable run of the trace).

    Args:
        trace: what ``load`` returned.
        run_id: the run to judge; needed when the trace holds several usable runs.
        rule_set: rules to run (None: the built-in rules; []: none).
        params: overrides, rule name (or code) -> {param: value}.
        preview: also run rules whose status is 'preview'.
    """
    chosen = trace._run(run_id)
    return diagnose_run(trace.con, chosen, configured(rule_set, params, preview))


def diagnose_runs(
    trace: Trace,
    *,
    jobs: Sequence[Diagnosis] = (),
    rule_set: list[Rule] | None = None,
    params: Params | None = None,
    preview: bool = False,
    on_run: Callable[[str], None] | None = None,
) -> list[Diagnosis]:
    """The runs' part of ``diagnose_all`` (same options): the diagnosis of every usable run, then (with several
    runs) that of the rules comparing them (run id ``all-runs``, present when they have something to say).
    ``jobs``: the diagnoses of the jobs (``diagnose_jobs``) whose findings explain their ranks' findings."""
    return _runs(trace, configured(rule_set, params, preview), on_run, jobs)


def _runs(
    trace: Trace, rules: ConfiguredRules, on_run: Callable[[str], None] | None, jobs: Sequence[Diagnosis]
) -> list[Diagnosis]:
    """Each usable run's diagnosis, its findings that a job finding of ``jobs`` explains marked so."""
    usable = trace.usable_run_ids()
    explanations = [e for j in jobs for e in j.explains]
    found = [explain_findings(d, explanations) for d in diagnose_many(trace.con, usable, rules, on_run)]
    several = diagnose_together(trace.con, usable, rules, views_built=True)  # diagnose_many built them
    return found if several is None else [*found, several]


def diagnose_jobs(
    trace: Trace, *, rule_set: list[Rule] | None = None, params: Params | None = None, preview: bool = False
) -> list[Diagnosis]:
    """The diagnosis of every multi-rank job of the trace (``Trace.jobs``): the job rules over its ranks'
    step times, collectives and links, with the problems met reading them."""
    return _jobs(trace, configured(rule_set, params, preview))


def _jobs(trace: Trace, rules: ConfiguredRules) -> list[Diagnosis]:
    ids = [j.job.job_id for j in trace.jobs]
    # several jobs: their job rules run once over all of them (each job's results as it gets them alone)
    judged = judge_jobs(trace.con, rules, ids)
    return [
        diagnose_job(trace.con, j.job, j.group_note, j.problems, rules, judged.get(j.job.job_id)) for j in trace.jobs
    ]


def diagnose_all(
    trace: Trace,
    *,
    rule_set: list[Rule] | None = None,
    params: Params | None = None,
    preview: bool = False,
    on_run: Callable[[str], None] | None = None,
) -> list[Diagnosis]:
    """Everything ``npu-triage diagnose`` judges, in its order: each job (``diagnose_jobs``), each usable run,
    then the rules comparing the runs. Options as ``diagnose``; ``on_run``: called with each run id as its
    diagnosis is assembled, after the rules ran over all the runs at once (a command's progress display).
    A rank's finding that a job finding explains (the job rules' [explains]) says so (``Finding.explained_by``):
    'info' and ranked last when, without the wait, it would not fire; else it keeps its severity and its impact
    is its own part (docs/job-explained.md)."""
    rules = configured(rule_set, params, preview)
    jobs = _jobs(trace, rules)
    return [*jobs, *_runs(trace, rules, on_run, jobs)]
