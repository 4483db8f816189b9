"""What the rules' [report] tables ask the charts to mark: limit lines, highlighted subjects, zoomed steps.

Read from the Diagnosis (each rule's ReportSpec, its effective params, its findings), so that no
chart names a rule: a chart draws the limit a rule declared and highlights what a rule reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyzer.diagnosis_model import Diagnosis
from analyzer.rule_engine.model import Finding

_STEP_SUBJECT = re.compile(r"^step (-?\d+)$")


def chart_family(key: str) -> str:
    """Charts of one family share a limit (both gap charts mark the same gap length).

    >>> chart_family("gap_histogram"), chart_family("busy")
    ('gap', 'busy')
    """
    return key.split("_", 1)[0]


@dataclass(frozen=True)
class ChartMarks:
    """Per chart key or family: the limit to draw, the subjects to highlight and the rules asking."""

    limits: dict[str, float]  # chart family -> limit value
    subjects: dict[str, frozenset[str]]  # chart key -> finding subjects to highlight
    markers: dict[str, tuple[str, ...]]  # chart key -> the rules whose subjects are highlighted

    def limit(self, key: str, default: float) -> float:
        """The limit declared for the chart's family, else ``default``."""
        return self.limits.get(chart_family(key), default)


def chart_marks(diagnosis: Diagnosis) -> ChartMarks:
    """The marks every chart of the run's page draws, from the rules' [report] tables (first rule wins a limit)."""
    limits: dict[str, float] = {}
    subjects: dict[str, set[str]] = {}
    markers: dict[str, list[str]] = {}
    for rule, spec in sorted(diagnosis.rule_reports.items()):
        if not spec.chart:
            continue
        owner, _, key = spec.limit_param.rpartition(".")  # 'chip.KEY': a value of the run's chip table
        value = diagnosis.params.get(owner or rule, {}).get(key) if spec.limit_param else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            limits.setdefault(chart_family(spec.chart), float(value))
        if spec.marks == "subjects":
            markers.setdefault(spec.chart, []).append(rule)
            subjects.setdefault(spec.chart, set()).update(
                # an operator family's finding names its type in op_type (the charts show types)
                f.details.get("op_type") or f.subject
                for f in diagnosis.findings
                if f.rule == rule and f.run_id == diagnosis.run_id
            )
    return ChartMarks(
        limits,
        {k: frozenset(v) for k, v in subjects.items()},
        {k: tuple(v) for k, v in markers.items()},
    )


def finding_step(finding: Finding) -> int | None:
    """The step a per-step finding is about: its ``step_id`` column, else a subject 'step N'.

    >>> from analyzer.rule_engine.model import Finding
    >>> f = Finding("r", "C", "warning", "compute", "t", "run", "step 50", 0.1, None, "m", "ratio", 1.0, None,
    ...             "high", "", "", ())
    >>> finding_step(f)
    50
    """
    step = finding.details.get("step_id")
    if isinstance(step, int) and not isinstance(step, bool):
        return step
    match = _STEP_SUBJECT.match(finding.subject or "")
    return int(match.group(1)) if match else None
