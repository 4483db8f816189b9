"""The Diagnosis of one run: metadata, every rule's outcome, and the ranked findings. Renderers take this."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, TypeAlias

from analyzer.rule_engine.model import ALL_RUNS, Explanation, Finding, ReportSpec, RuleOutcome


def field_values(value: Any) -> dict[str, Any]:
    """A dataclass's fields by name, its values as they are (not dataclasses.asdict's deep copy of them)."""
    return {f.name: getattr(value, f.name) for f in fields(value)}


# Bumped whenever diagnosis.json changes incompatibly; documented in docs/diagnosis-json.md.
DIAGNOSIS_FORMAT_VERSION = 2


@dataclass(frozen=True)
class BreakdownPart:
    """One part of the time breakdown: its key (docs/diagnosis.schema.json lists the 11), label, time and share."""

    part: str
    label: str
    us: float
    pct: float  # the parts' pcts add up to exactly 100.0


@dataclass(frozen=True)
class TimeBreakdown:
    """Where the time of the run's steps (else of its profiled span) went: the parts in their fixed order."""

    span_us: float
    basis: str  # what the span is: 'steps' or 'profiled span'
    source: str  # where its bounds come from
    subject: str
    parts: tuple[BreakdownPart, ...]
    text: str  # the parts as one sentence


@dataclass(frozen=True)
class RunSummary:
    """A run's summary numbers (diagnosis.json ``summary``; the fields of docs/diagnosis.schema.json).

    ``span_us`` and ``computing_*`` are over the time breakdown's span (all steps together, else the
    profiled span), the same numbers the rules judge; ``step_computing_*`` are per step (None with fewer
    than two steps); ``step_preparing_us`` is the mean per step of the time before its first task that the
    export gives apart from the step (torch_npu's Preparing, msprof's Data Aug Bound), not in the span;
    ``task_range_us`` is first task start .. last task end. ``memory``: per device the peak and who holds it
    (analyzer/diagnosis_memory.py), None when not collected.
    """

    span_us: float | None
    computing_us: float | None
    computing_ratio: float | None
    computing_pct: float | None  # the computing share as the breakdown prints it
    span_basis: str | None
    span_source: str | None
    task_range_us: float | None
    step_computing_ratio_min: float | None
    step_computing_ratio_median: float | None
    step_computing_lowest_step: int | None
    step_preparing_us: float | None  # per step, the host's time before its first task: not in span_us
    step_count: int
    task_count: int
    compute_task_count: int
    breakdown: TimeBreakdown | None
    memory: dict[str, Any] | None


@dataclass(frozen=True)
class RunsSummary:
    """The all-runs Diagnosis' summary: how many runs its rules compared (nothing per run)."""

    run_count: int


# A job's summary (analyzer/job/diagnosis.py): its summary row, keyed by column.
JobSummary: TypeAlias = dict[str, Any]


def job_summary(summary: RunSummary | RunsSummary | JobSummary) -> JobSummary:
    """The summary of a job's Diagnosis (analyzer/job/diagnosis.py); TypeError for a run's."""
    if not isinstance(summary, dict):
        raise TypeError(f"not a job's summary: {type(summary).__name__}")
    return summary


@dataclass(frozen=True)
class Diagnosis:
    """Everything a renderer needs about one run. Renderers never query raw files.

    ``run`` is the run's row of the ``runs`` table as a dict; ``summary`` holds run-level
    numbers (a RunSummary; a RunsSummary for the all-runs Diagnosis, a JobSummary for a job's);
    ``problems`` are ingest problems as dicts (file, location, severity, problem, hint).
    """

    run_id: str
    run: dict[str, Any]
    summary: RunSummary | RunsSummary | JobSummary
    outcomes: tuple[RuleOutcome, ...]
    findings: tuple[Finding, ...]  # ranked
    problems: tuple[dict[str, Any], ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    tool_version: str = ""
    rule_reports: dict[str, ReportSpec] = field(default_factory=dict)  # rule name -> its [report] table
    # operators whose task failed, with their log error records (analyzer/logs/links.py); () without logs
    failed_operators: tuple[dict[str, Any], ...] = ()
    accuracy_links: tuple[dict[str, Any], ...] = ()  # accuracy reports naming this run (report/accuracy_links.py)
    # a job's: the findings of its ranks that its findings explain (analyzer/job/explained.py); not written out
    explains: tuple[Explanation, ...] = ()

    @property
    def compares_runs(self) -> bool:
        """True for the all-runs Diagnosis: findings of the rules comparing several runs, whose
        ``run`` is ``{"runs": [run ids]}``, ``summary`` a RunsSummary (nothing per run)."""
        return self.run_id == ALL_RUNS

    def __repr__(self) -> str:  # one line (the generated one printed every finding's evidence, 35 KB)
        from analyzer.report.notebook import diagnosis_repr

        return diagnosis_repr(self)

    def _repr_html_(self) -> str:
        from analyzer.report.notebook import diagnosis_html

        return diagnosis_html(self)

    @property
    def is_job(self) -> bool:
        """True for a multi-rank job's Diagnosis (analyzer/job/diagnosis.py): ``run`` holds its ranks."""
        return self.run.get("scope") == "job"


# The host's time before each step's first task, which the export gives apart from the step: its label (short:
# a page's summary card holds it) and what its amount is.
PREPARING_LABEL = "preparing per step"
PREPARING_NOTE = "before the step's first task, not in the step (mean)"


def step_preparing_text(summary: RunSummary) -> str | None:
    """``step_preparing_us`` as a phrase (torch_npu's Preparing, msprof's Data Aug Bound: the host starting
    the step, loading its data); None when the export does not give it."""
    us = summary.step_preparing_us
    return None if us is None else f"{us:,.3f} us {PREPARING_NOTE}"


def step_computing_text(summary: RunSummary) -> str | None:
    """The spread of the computing share over several steps, as one phrase; None with fewer than two steps."""
    low = summary.step_computing_ratio_min
    if low is None:
        return None
    return (
        f"per step: lowest {low:.1%} (step {summary.step_computing_lowest_step}), "
        f"median {summary.step_computing_ratio_median or 0:.1%}"
    )
