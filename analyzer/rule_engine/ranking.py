"""Order findings by the device time their fix could recover, deterministically."""

from __future__ import annotations

from analyzer.rule_engine.model import SEVERITY_RANK, Finding


def ranking_key(finding: Finding) -> tuple:
    """Sort key: impact_us descending, then severity (critical first), code, subject, run id."""
    return (
        -round(finding.impact_us, 3),
        -SEVERITY_RANK.get(finding.severity, -1),
        finding.code,
        finding.subject,
        finding.run_id,
    )


def rank_findings(findings: list[Finding]) -> list[Finding]:
    """Findings ranked by ``ranking_key``; the same input always gives the same order."""
    return sorted(findings, key=ranking_key)
