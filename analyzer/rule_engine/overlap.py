"""Make findings' impacts exclusive, so that no device time is counted by two findings.

Two families of findings claim the same device time:

- idle time: ``low-aicore-utilization`` (all idle time of a step, or of the run) contains the idle
  time that ``communication-not-overlapped`` (same step) and ``inter-op-gap`` (its gaps inside the
  step) claim. The umbrella keeps only the rest; its ``details`` keep the whole as ``idle_us``.
- busy time of one operator type: ``mte-share-high``, ``format-conversion-overhead``,
  ``aicpu-operators`` and ``call-count-hotspot`` may all name the same type. Their impacts, largest
  first, are capped so that together they never exceed the type's device-busy time.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import duckdb

from analyzer.rule_engine.model import Finding

UMBRELLA = "low-aicore-utilization"
IDLE_PARTS = ("communication-not-overlapped", "inter-op-gap")
BUSY_RULES = ("mte-share-high", "format-conversion-overhead", "aicpu-operators", "call-count-hotspot")


def _with_impact(f: Finding, impact: float, details: dict[str, Any]) -> Finding:
    share = f.span_share * impact / f.impact_us if f.span_share is not None and f.impact_us > 0 else f.span_share
    return replace(f, impact_us=impact, span_share=share, details={**f.details, **details})


def _gap_time_in_step(con: duckdb.DuckDBPyConnection, f: Finding, threshold_us: float) -> float:
    step = f.details.get("step_id")
    row = con.execute(
        "SELECT coalesce(sum(gap_us), 0) FROM _classified_gaps WHERE run_id = $r AND gap_us >= $t "
        "AND ($s IS NULL OR step_id = $s)",
        {"r": f.run_id, "t": threshold_us, "s": step},
    ).fetchall()[0]
    return float(row[0])


def _exclusive_idle(
    con: duckdb.DuckDBPyConnection, findings: list[Finding], params: dict[str, dict[str, Any]]
) -> list[Finding]:
    fired = {(f.rule, f.run_id, f.subject): f for f in findings if f.rule in IDLE_PARTS}
    gap_rule_fired = {f.run_id for f in findings if f.rule == "inter-op-gap"}
    threshold = float(params.get("inter-op-gap", {}).get("threshold_us", 200.0))
    out = []
    for f in findings:
        if f.rule != UMBRELLA:
            out.append(f)
            continue
        comm = fired.get(("communication-not-overlapped", f.run_id, f.subject))
        comm_us = comm.impact_us if comm else 0.0
        gaps_us = _gap_time_in_step(con, f, threshold) if f.run_id in gap_rule_fired else 0.0
        claimed = []
        if comm_us:
            claimed.append(f"communication-not-overlapped {comm_us:.1f} us")
        if gaps_us:
            claimed.append(f"inter-op-gap {gaps_us:.1f} us")
        rest = max(0.0, f.impact_us - comm_us - gaps_us)
        out.append(_with_impact(f, rest, {"idle_us": f.impact_us, "counted_by_other_findings": "; ".join(claimed)}))
    return out


def _exclusive_busy(con: duckdb.DuckDBPyConnection, findings: list[Finding]) -> list[Finding]:
    busy = {
        (r, t): b
        for r, t, b in con.execute(
            "SELECT run_id, op_type, busy_us FROM _op_type_busy WHERE op_type IS NOT NULL"
        ).fetchall()
    }
    claimed: dict[tuple[str, str], float] = {}
    order = sorted((f for f in findings if f.rule in BUSY_RULES), key=lambda f: (-f.impact_us, f.code, f.subject))
    capped: dict[int, Finding] = {}
    for f in order:
        key = (f.run_id, f.subject)
        total = busy.get(key)
        if total is None:
            continue
        left = max(0.0, total - claimed.get(key, 0.0))
        if f.impact_us > left:
            capped[id(f)] = _with_impact(f, left, {"impact_before_overlap_us": f.impact_us})
        claimed[key] = claimed.get(key, 0.0) + min(f.impact_us, left)
    return [capped.get(id(f), f) for f in findings]


def exclusive_impacts(
    con: duckdb.DuckDBPyConnection, findings: list[Finding], params: dict[str, dict[str, Any]] | None = None
) -> list[Finding]:
    """The findings with impacts that count each stretch of device time once (needs the helper views).

    ``params`` are the rules' effective params (rule name -> {param: value}, defaults included).
    """
    return _exclusive_busy(con, _exclusive_idle(con, findings, params or {}))
