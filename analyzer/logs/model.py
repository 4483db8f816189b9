"""LogReport: what `npu-triage logs` found in a log folder, ready for the renderers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from analyzer.rule_engine.model import Finding, RuleOutcome

LOG_REPORT_FORMAT_VERSION = 1


@dataclass(frozen=True)
class LogReport:
    """The ranked findings of one log folder, its reading summary, and the records around the failure."""

    run_id: str
    summary: dict[str, Any]  # files, records, unparsed lines, levels, layouts, time span, sessions
    findings: list[Finding]
    outcomes: list[RuleOutcome]
    context_columns: tuple[str, ...] = ()
    context: tuple[tuple[Any, ...], ...] = ()  # the records around the first finding's record
    problems: list[str] = field(default_factory=list)
    lost_files: list[str] = field(default_factory=list)  # files that could not be read (not binary: unreadable)
    tool_version: str = ""
