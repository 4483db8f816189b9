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

    def placed_text(self) -> str | None:
        """What the summary says of the records on the profile's timeline (diagnose --logs): how many were
        placed, the clock assumed and, when none was, why ('timeline_note'); None for logs read alone."""
        s = self.summary
        if "clock" not in s:
            return None
        note = f"; {s['timeline_note']}" if s.get("timeline_note") else ""
        return f"{s['timeline_marks']} record(s); {s['clock']}{note}"
