"""An accuracy report as a JSON-serialisable dict (accuracy.json)."""

from __future__ import annotations

from analyzer.accuracy.judge import AccuracyReport
from analyzer.version import __version__

GENERATED_BY = "npu-triage accuracy"


def finding_dict(f) -> dict:
    """One finding, as diagnosis.json writes findings."""
    return {
        "code": f.code, "rule": f.rule, "severity": f.severity, "title": f.title, "subject": f.subject,
        "metric": f.metric, "unit": f.unit, "value": f.value, "threshold": f.threshold, "message": f.message,
        "confidence": f.confidence, "advice_summary": f.advice_summary, "advice_steps": list(f.advice_steps),
        "details": f.details, "evidence_columns": list(f.evidence_columns), "evidence": [list(r) for r in f.evidence],
    }  # fmt: skip


def accuracy_json(report: AccuracyReport) -> dict:
    """The whole report: findings ranked, rule outcomes, operators in execution order, locations, unpaired, problems."""
    return {
        "generated_by": GENERATED_BY,
        "tool_version": __version__,
        "run_id": report.run_id,
        "dump": report.dump,
        "reference": report.reference,
        "profile": report.profile,
        "counts": report.counts,
        "findings": [finding_dict(f) for f in report.findings],
        "rules": [
            {"code": o.code, "rule": o.rule, "status": o.status, "finding_count": o.finding_count, "reason": o.reason}
            for o in report.outcomes
        ],
        "operators": report.operators,
        "error_locations": report.locations,
        "unpaired": report.unpaired,
        "stats": report.stats,
        "problems": [
            {"file": p.file, "location": p.location, "severity": p.severity, "problem": p.problem, "hint": p.hint}
            for p in report.problems
        ],
    }
