"""Diagnosis -> diagnosis.json (docs/diagnosis-json.md): versioned, deterministic, no paths."""

from __future__ import annotations

import math
from dataclasses import fields, is_dataclass
from enum import Enum
from typing import Any

from analyzer.diagnosis_model import DIAGNOSIS_FORMAT_VERSION, Diagnosis, field_values
from analyzer.report.json_text import indented_json
from analyzer.rule_engine.model import ExplainedBy, Finding, RuleOutcome
from analyzer.rule_engine.ranking import RANKING

FORMAT_NAME = "npu-triage-diagnosis"
FLOAT_DIGITS = 4  # every float in the body is rounded to this many decimals


def fixed(value: Any, digits: int = FLOAT_DIGITS) -> Any:
    """Round floats (also inside lists and dicts) to ``digits`` decimals; NaN/inf become None.

    >>> fixed({"a": 0.123456, "b": [1.0000001, "x"], "c": float("nan")})
    {'a': 0.1235, 'b': [1.0, 'x'], 'c': None}
    """
    kind = type(value)
    if kind in _AS_IS:  # most values of a diagnosis: one look-up instead of four isinstance
        return value
    if isinstance(value, float):
        return round(value, digits) if math.isfinite(value) else None
    # a value of the kinds kept as they are is taken without a call: most of a diagnosis's values
    if isinstance(value, (list, tuple)):
        return [v if type(v) in _AS_IS else fixed(v, digits) for v in value]
    if isinstance(value, dict):
        return {str(k): v if type(v) in _AS_IS else fixed(v, digits) for k, v in value.items()}
    if isinstance(value, Enum) and not isinstance(value, (str, int)):
        return str(value)  # as json.dumps(default=str) writes it (json_text.py)
    if is_dataclass(value) and not isinstance(value, type):  # as dataclasses.asdict, without its deep copies
        return {f.name: fixed(getattr(value, f.name), digits) for f in fields(value)}
    return value


_AS_IS = frozenset({str, int, bool, type(None)})


def outcome_dict(o: RuleOutcome) -> dict[str, Any]:
    return {
        "rule": o.rule,
        "code": o.code,
        "status": o.status,
        "findings": o.finding_count,
        "reason": o.reason,
        "enable_hint": o.enable_hint,
    }


def _explained_dict(by: ExplainedBy) -> dict[str, Any]:
    """The job finding that explains a rank's finding; the amounts only when its [explains] gave them."""
    d = field_values(by)
    if by.explained_ms is None:
        d = {k: d[k] for k in ("code", "rule", "subject", "note", "severity")}
    return {**d, "text": by.text}


def finding_dict(rank: int, f: Finding) -> dict[str, Any]:
    """One finding; 'explained_by' only on a rank's finding that a finding of its job explains."""
    by = f.explained_by
    explained = {} if by is None else {"explained_by": _explained_dict(by)}
    return {
        "rank": rank,
        "rule": f.rule,
        "code": f.code,
        "severity": f.severity,
        "category": f.category,
        "title": f.title,
        "subject": f.subject,
        "message": f.message,
        "metric": f.metric,
        "unit": f.unit,
        "value": f.value,
        "threshold": f.threshold,
        "impact_us": f.impact_us,
        "span_share": f.span_share,
        "confidence": f.confidence,
        "details": f.details,
        "evidence": {"columns": list(f.evidence_columns), "rows": [list(r) for r in f.evidence]},
        "advice": {"summary": f.advice_summary, "steps": list(f.advice_steps)},
        **explained,
    }


def diagnosis_dict(d: Diagnosis) -> dict[str, Any]:
    """The JSON document as a dict (floats rounded); 'failed_operators' only when logs link one."""
    linked = {"failed_operators": list(d.failed_operators)} if d.failed_operators else {}
    return fixed(
        {
            **linked,
            "format": FORMAT_NAME,
            "format_version": DIAGNOSIS_FORMAT_VERSION,
            "tool_version": d.tool_version,
            "run_id": d.run_id,
            "run": d.run,
            "summary": d.summary,  # its fields as a dict, made by fixed (without asdict's deep copies)
            "completeness": [outcome_dict(o) for o in d.outcomes],
            "ranking": RANKING,
            "findings": [finding_dict(i, f) for i, f in enumerate(d.findings, start=1)],
            "ingest_problems": list(d.problems),
            "params": d.params,
        }
    )


def render_json(d: Diagnosis) -> str:
    """diagnosis.json text: sorted keys, two-space indent, trailing newline."""
    return indented_json(diagnosis_dict(d)) + "\n"
