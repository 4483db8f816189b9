"""The operator-type charts count what the rules count, and the calls chart's hotspots are the rule's findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.diagnosis import diagnose
from analyzer.report.html import build_figures
from analyzer.rule_engine.loader import load_rules
from analyzer.rule_engine.model import ConfiguredRules
from tests.plotly_view import validated, validated_all
from tests.test_report_series import _add_ops

ROOT = Path(__file__).resolve().parents[1]
# The rules whose [report] tables mark the calls chart (marks = "subjects") and the gap charts (limit_param).
HOTSPOT_RULE = "call-count-hotspot"
GAP_RULE = "inter-op-gap"
HOTSPOT = [r for r in load_rules(ROOT / "rules") if r.name == HOTSPOT_RULE]


def _add_swarm(con) -> None:
    """Tiny Add and Cast swarms, a few large MatMuls, a swarm of tiny HCCL tasks and a short Mul run.

    With HCCL counted, allreduce would rank second by time; Mul is cheap but called too few times
    for the rule (min_calls 20), though cheaper than the average task.
    """
    kinds = [
        ("Add", "AI_VECTOR_CORE", 40, 2),
        ("Cast", "AI_VECTOR_CORE", 30, 1),
        ("MatMulV2", "AI_CORE", 4, 50),
        ("allreduce", "HCCL", 50, 3),
        ("Mul", "AI_VECTOR_CORE", 10, 1),
    ]
    rows, t = [], 0
    for op_type, task_type, calls, dur in kinds:
        for i in range(calls):
            rows.append((f"{op_type}_{i}", op_type, task_type, t, dur))
            t += dur + 1
    _add_ops(con, rows)


def _hotspot_trace(figure):
    (trace,) = [t for t in figure.data if t.name.startswith("hotspot")]
    return trace


@pytest.mark.slow
@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({}, {"Add"}),
        ({HOTSPOT_RULE: {"stand_out": 2.5}}, {"Add", "Cast"}),
        pytest.param({HOTSPOT_RULE: {"min_time_share": 0.2}}, {"Add"}, marks=pytest.mark.slow),
        pytest.param({HOTSPOT_RULE: {"min_calls": 35}}, {"Add"}, marks=pytest.mark.slow),
        ({HOTSPOT_RULE: {"min_calls": 5, "launch_cost_factor": 0.075, "stand_out": 0.1}}, {"Cast", "Mul"}),
    ],
)
def test_calls_chart_hotspots_are_the_rule_findings_with_its_effective_params(con, overrides, expected):
    _add_swarm(con)
    diagnosis = diagnose(con, "r", ConfiguredRules(tuple(HOTSPOT), overrides))
    findings = {f.details["op_type"]: f for f in diagnosis.findings}
    assert set(findings) == expected
    calls = _hotspot_trace(validated(build_figures(con, diagnosis)["calls"]))
    charted = {label: (x, total) for (label, total), x in zip(calls.customdata, calls.x, strict=True)}
    assert set(charted) == expected
    for subject, (call_count, total_ms) in charted.items():
        assert call_count == findings[subject].details["calls"]
        assert total_ms * 1000 == pytest.approx(findings[subject].details["total_us"])


@pytest.mark.slow
def test_op_type_charts_leave_out_communication_tasks_like_the_rules(con):
    _add_swarm(con)
    diagnosis = diagnose(con, "r", ConfiguredRules(tuple(HOTSPOT)))
    figures = validated_all(build_figures(con, diagnosis))
    compute = con.execute(
        "SELECT op_type, count(*), sum(dur_us) FROM _compute_tasks WHERE run_id = 'r' "
        "GROUP BY op_type ORDER BY sum(dur_us) DESC, op_type"
    ).fetchall()
    pareto = figures["pareto"].data[0]
    assert list(pareto.x) == [row[0] for row in compute]
    assert [c for c, _ in pareto.customdata] == [row[1] for row in compute]
    assert "compute tasks" in figures["pareto"].layout.title.text
    calls = figures["calls"]
    charted = {label for trace in calls.data for label, _ in trace.customdata}
    assert charted == {row[0] for row in compute}
    assert "compute tasks" in calls.layout.title.text
    assert _hotspot_trace(calls).name == f"hotspot ({HOTSPOT_RULE} finding)"


GAPS = [r for r in load_rules(ROOT / "rules") if r.name == GAP_RULE]


@pytest.mark.slow
@pytest.mark.parametrize(("overrides", "threshold_us"), [({}, 200.0), ({"chip": {"gap_threshold_us": 350}}, 350.0)])
def test_gap_charts_highlight_the_gaps_the_rule_counts(con, overrides, threshold_us):
    # Gaps of 150, 300 and 400 us: the default rule (200 us) counts two, a 350 us threshold one.
    _add_ops(con, [(f"op{i}", "Add", "AI_CORE", start, 10) for i, start in enumerate((0, 160, 470, 880))])
    diagnosis = diagnose(con, "r", ConfiguredRules(tuple(GAPS), overrides))
    (finding,) = diagnosis.findings
    figures = validated_all(build_figures(con, diagnosis))
    (marked,) = [t for t in figures["gap_positions"].data if t.name.startswith(">=")]
    assert sorted(marked.y) == sorted(g for g in (150.0, 300.0, 400.0) if g >= threshold_us)
    assert len(marked.y) == finding.details["gap_count"]
    assert f"{threshold_us:.0f}" in figures["gap_histogram"].layout.title.text
