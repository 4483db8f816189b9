"""The Diagnosis of one run: metadata, every rule's outcome, and the ranked findings. Renderers take this."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from analyzer.rule_engine.model import ALL_RUNS, Finding, ReportSpec, RuleOutcome

# Bumped whenever diagnosis.json changes incompatibly; documented in docs/diagnosis-json.md.
DIAGNOSIS_FORMAT_VERSION = 2


@dataclass(frozen=True)
class Diagnosis:
    """Everything a renderer needs about one run. Renderers never query raw files.

    ``run`` is the run's row of the ``runs`` table as a dict; ``summary`` holds run-level
    numbers (span_us, busy_ratio, step count, ...); ``problems`` are ingest problems as dicts
    (file, location, severity, problem, hint).
    """

    run_id: str
    run: dict[str, Any]
    summary: dict[str, Any]
    outcomes: tuple[RuleOutcome, ...]
    findings: tuple[Finding, ...]  # ranked
    problems: tuple[dict[str, Any], ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    tool_version: str = ""
    rule_reports: dict[str, ReportSpec] = field(default_factory=dict)  # rule name -> its [report] table
    # operators whose task failed, with their log error records (analyzer/logs/links.py); () without logs
    failed_operators: tuple[dict[str, Any], ...] = ()
    accuracy_links: tuple[dict[str, Any], ...] = ()  # accuracy reports naming this run (report/accuracy_links.py)

    @property
    def compares_runs(self) -> bool:
        """True for the all-runs Diagnosis: findings of the rules comparing several runs, whose
        ``run`` is ``{"runs": [run ids]}``, ``summary`` ``{"run_count": n}`` (nothing per run)."""
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
