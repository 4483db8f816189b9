"""Order findings by the device time their fix could recover, deterministically."""

from __future__ import annotations

from analyzer.rule_engine.model import SEVERITY_RANK, Finding

RANKING = (
    "Findings are ranked by the device time their fix could recover (impact_us, after de-overlap: no "
    "stretch of time is counted by two findings, and the impacts of a run never add up to more than its "
    "span), largest first; ties by severity (critical, warning, info), then rule code and subject. "
    "Severity says how sure and how actionable the finding is, not how large: a 'critical' finding with "
    "little time left to recover (others claimed it) ranks below a 'warning' that recovers more."
)


def ranking_key(finding: Finding) -> tuple:
    """Sort key: findings a job finding explains last (one it explains in part ranks by what is left, its
    impact_us); then impact_us descending, severity (critical first), code, subject, run id."""
    return (
        finding.explained_by is not None and not finding.explained_by.partial,
        -round(finding.impact_us, 3),
        -SEVERITY_RANK.get(finding.severity, -1),
        finding.code,
        finding.subject,
        finding.run_id,
    )


def rank_findings(findings: list[Finding]) -> list[Finding]:
    """Findings ranked by ``ranking_key``; the same input always gives the same order."""
    return sorted(findings, key=ranking_key)
