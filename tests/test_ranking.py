"""rank_findings: impact first, then severity, code, subject; independent of input order."""

from __future__ import annotations

from analyzer.rule_engine.model import Finding
from analyzer.rule_engine.ranking import rank_findings


def _finding(code, subject, impact, severity="warning"):
    return Finding(
        rule=code.lower(),
        code=code,
        severity=severity,
        category="compute",
        title="t",
        run_id="r",
        subject=subject,
        value=None,
        threshold=None,
        metric="m",
        unit="us",
        impact_us=impact,
        span_share=None,
        confidence="medium",
        message="",
        advice_summary="",
        advice_steps=(),
    )


def test_ranking_impact_then_severity_then_code_then_subject():
    found = [
        _finding("SCH001", "b", 10.0),
        _finding("MEM001", "z", 10.0),
        _finding("MEM001", "a", 10.0),
        _finding("CMP001", "x", 10.0, "critical"),
        _finding("COM001", "y", 50.0, "info"),
    ]
    ranked = [(f.code, f.subject) for f in rank_findings(found)]
    assert ranked == [
        ("COM001", "y"),
        ("CMP001", "x"),
        ("MEM001", "a"),
        ("MEM001", "z"),
        ("SCH001", "b"),
    ]


def test_ranking_input_order_does_not_matter():
    found = [_finding(f"MEM00{i % 3}", str(i), float(i % 2)) for i in range(9)]
    assert rank_findings(found) == rank_findings(list(reversed(found)))
