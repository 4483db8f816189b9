"""Frozen data classes of the analysis layer: a rule as loaded, the rules as configured, a finding, a rule's outcome."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from analyzer.vocabulary import SEVERITIES, Confidence, OutcomeStatus, Severity

SEVERITY_RANK: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}
# The run id of what the rules of scope 'runs' judge together: their outcomes and findings ($run_id of their SQL),
# the Diagnosis holding them and its report folder. The one spelling; every consumer imports it.
ALL_RUNS = "all-runs"


@dataclass(frozen=True)
class Rule:
    """One rule file, loaded (see rules/TEMPLATE.toml for the format). Its words (category, severity,
    status, scope, polarity, unit, impact_family, impact_role) are as written in the file: validation checks
    them against analyzer.vocabulary."""

    id: str
    name: str
    title: str
    category: str
    severity: str
    status: str
    since: str
    scope: str
    requires: dict[str, tuple[str, ...]]
    params: dict[str, Any]
    sql: str
    metric: str
    unit: str
    polarity: str
    message: str
    advice_summary: str
    advice_steps: tuple[str, ...]
    doc_checks: str
    doc_why: str
    references: tuple[str, ...] = ()
    enable_hint: str = ""  # the collection setting that provides what `requires` needs
    evidence_sql: str = ""  # optional query for the evidence rows of one finding ($subject bound)
    path: str = ""
    collect: str = ""  # key of analyzer.ingest.finalize.SETTINGS that enable_hint was taken from
    doc_impact: str = ""  # how impact_us is computed ([doc] impact)
    threshold_param: str = ""  # the param reported as a finding's threshold ([finding] threshold_param)
    impact_family: str = ""  # ("" = none) which pool of time its impact claims ([impact] family, see impact_sharing.py)
    impact_role: str = "part"  # 'part', or 'umbrella' (claims what the parts of its family leave)
    # ([impact] waits) what its amount is called, when it holds the time the rank waits for other ranks: a job
    # finding's [explains] can then explain that part of it (analyzer/job/explained.py); "" = no such part
    impact_waits: str = ""
    schema_version: int = 1
    report: ReportSpec = field(default_factory=lambda: ReportSpec())
    explains: ExplainsSpec = field(default_factory=lambda: ExplainsSpec())


@dataclass(frozen=True)
class ReportSpec:
    """How reports show a rule's findings ([report] of its file): the chart beside them and how it
    marks them. Empty ``chart``: evidence and text only."""

    chart: str = ""  # key of a report chart (validation.CHART_KINDS)
    zoom: str = ""  # 'step': the chart is zoomed to the finding's step
    limit_param: str = ""  # the param drawn as the chart's limit line
    marks: str = ""  # 'subjects': the chart highlights the findings' subjects
    unknown: tuple[str, ...] = ()  # keys of [report] that mean nothing (validation reports them)


@dataclass(frozen=True)
class ExplainsSpec:
    """Which rank-level findings a job rule's finding explains ([explains] of its file): those of
    ``categories`` on the ranks its ``sql`` returns ($run_id: the job, $subject and $impact_us: the job finding's;
    columns ``rank`` and ``explained_us``, the time per job step the cause costs the rank, or ``rank`` alone:
    whole findings), each given the note ``note`` (a template of the job finding's columns)."""

    categories: tuple[str, ...] = ()
    note: str = ""
    sql: str = ""
    unknown: tuple[str, ...] = ()  # keys of [explains] that mean nothing (validation reports them)


@dataclass(frozen=True)
class ExplainedBy:
    """The job finding that explains a rank's finding: its code, rule and subject, the note saying how
    ("waiting for rank 777"), and the severity the rank's finding had before (it is 'info' now, unless
    ``partial``). With amounts (a two-column [explains]): of the finding's ``amount_ms`` (``per`` step, or in
    the run) of ``waits``, ``explained_ms`` is the wait and ``own_ms`` the rank's own; ``partial``: what is
    its own would still be a finding, which stays a warning."""

    code: str
    rule: str
    subject: str
    note: str
    severity: Severity | str
    explained_ms: float | None = None
    amount_ms: float | None = None
    own_ms: float | None = None
    per: str = ""  # 'per step' or 'in the run': the amounts' unit
    waits: str = ""  # what the amount is ('exposed communication'; the rank rule's [impact] waits)
    partial: bool = False

    @property
    def text(self) -> str:
        """The note as reports print it: 'explained by <code>: <note>', with the amounts when known."""
        if self.explained_ms is None:
            return f"explained by {self.code}: {self.note}"
        return (
            f"{'partly ' if self.partial else ''}explained by {self.code}: {self.explained_ms:.1f} of its "
            f"{self.amount_ms:.1f} ms {self.per} of {self.waits} is {self.note}; {self.own_ms:.1f} ms is its own"
        )


@dataclass(frozen=True)
class Explanation:
    """What one job finding explains: the findings of ``categories`` of the rank runs ``run_ids``; with
    ``explained_us`` (per run, the time per job step the cause costs it) only the part of the findings of
    the rules of ``waits`` (rule name -> what its amount is called and its polarity) that the cost covers."""

    by: ExplainedBy  # its severity: "" here; each explained finding keeps its own
    categories: tuple[str, ...]
    run_ids: tuple[str, ...]
    explained_us: Mapping[str, float] | None = None  # None: a one-column [explains], whole findings
    waits: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    job_steps: int = 0  # the job's steps, the unit of explained_us for a rank run without steps of its own
    # A finding of each rank's run asks whether its run is one of these: a set, once, not a scan of the tuple
    # per finding (which grows with the square of the ranks).
    run_id_set: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "run_id_set", frozenset(self.run_ids))


@dataclass(frozen=True)
class ConfiguredRules:
    """The rules a diagnosis runs, as the user set them: the loaded rules, the user's param overrides
    (rule name -> {param: value}) and whether rules of status 'preview' run."""

    rules: tuple[Rule, ...]
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    preview: bool = False

    def where(self, keep: Callable[[Rule], bool]) -> ConfiguredRules:
        """The same settings over the rules ``keep`` is true of."""
        return replace(self, rules=tuple(r for r in self.rules if keep(r)))

    def params(self, rule: Rule) -> dict[str, Any]:
        """The rule's declared params with the user's overrides for that rule applied."""
        return {**rule.params, **self.overrides.get(rule.name, {})}

    def params_in_effect(self) -> dict[str, dict[str, Any]]:
        """Rule name -> the params it runs with, for every rule that has params (what reports list)."""
        return {r.name: self.params(r) for r in self.rules if r.params}


@dataclass(frozen=True)
class Finding:
    """One row a rule's query returned, made into a finding."""

    rule: str  # rule name
    code: str  # rule id
    severity: Severity
    category: str
    title: str
    run_id: str
    subject: str
    value: float | None
    threshold: float | None
    metric: str
    unit: str
    impact_us: float  # time the fix could recover, counted on the device timeline
    span_share: float | None  # impact_us / the run's (or step's) span
    confidence: Confidence
    message: str
    advice_summary: str
    advice_steps: tuple[str, ...]
    evidence_columns: tuple[str, ...] = ()
    evidence: tuple[tuple[Any, ...], ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    explained_by: ExplainedBy | None = None  # a job finding whose cause this is (analyzer/job/explained.py)

    def __repr__(self) -> str:  # one line: code, subject and impact (the evidence rows are in ``evidence``)
        from analyzer.report.notebook import finding_repr

        return finding_repr(self)

    def _repr_html_(self) -> str:
        from analyzer.report.notebook import finding_html

        return finding_html(self)


@dataclass(frozen=True)
class RuleOutcome:
    """What happened when one rule met one run: ran (with n findings), skipped (and why), or failed."""

    rule: str
    code: str
    run_id: str
    status: OutcomeStatus
    finding_count: int = 0
    reason: str = ""  # for skipped/failed: what is missing or what went wrong
    enable_hint: str = ""  # for skipped: the collection setting that would enable the rule
