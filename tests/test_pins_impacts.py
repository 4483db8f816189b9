"""Impacts pinned by their numbers: ranking to the ns, de-overlap largest first and capped by each pool."""

from __future__ import annotations

from dataclasses import replace

import pytest

from analyzer.rule_engine.fixture_tables import load_fixture_tables
from analyzer.rule_engine.impact_sharing import exclusive_impacts
from analyzer.rule_engine.model import Finding
from analyzer.rule_engine.ranking import rank_findings
from analyzer.rule_engine.views.build import create_views
from tests.rule_cases import RULES
from tests.test_ranking import _finding as ranking_finding

# Stream 1 runs type A 0-60 us, stream 2 type B 30-80 us, type D 299-300 us: computing (the union) is 81 us,
# the span 300 us, the device idle 219 us.
_OPS = """run_id,device_id,stream_id,step_id,op_name,op_type,task_type,start_ns,dur_us,end_ns
r,0,1,,A_1,A,AI_CORE,0,60,60000
r,0,2,,B_1,B,AI_CORE,30000,50,80000
r,0,1,,D_1,D,AI_CORE,299000,1,300000
"""


def _finding(rule: str, subject: str, impact: float, code: str | None = None) -> Finding:
    """A warning of ``rule`` on run 'r' (its span share of the 300 us span of _OPS)."""
    return replace(ranking_finding(code or RULES[rule].id, subject, impact), rule=rule, span_share=impact / 300)


@pytest.fixture
def two_streams(con, tmp_path):
    (tmp_path / "ops.csv").write_text(_OPS, encoding="utf-8")
    load_fixture_tables(con, tmp_path)
    create_views(con)
    return con


def _family(name: str) -> list[str]:
    return sorted(r.name for r in RULES.values() if r.impact_family == name and r.impact_role == "part")


def test_pins_operator_time_claims_are_capped_by_the_computing_time(two_streams):
    # 60 us on A and 50 us on B fit their types' time, but the run computed for 81 us only: the larger
    # claims first and keeps 60, the smaller keeps what is left of computing (21 us), not its 50.
    first, second = _family("operator-time")[:2]
    found = [_finding(second, "B", 50.0), _finding(first, "A", 60.0)]
    got = {f.subject: round(f.impact_us, 6) for f in exclusive_impacts(two_streams, found, list(RULES.values()))}
    assert got == {"A": 60.0, "B": 21.0}


def test_pins_operator_time_claims_never_exceed_their_type(two_streams):
    first, second = _family("operator-time")[:2]
    found = [_finding(first, "A", 70.0), _finding(second, "A", 30.0)]  # type A ran 60 us
    got = [round(f.impact_us, 6) for f in exclusive_impacts(two_streams, found, list(RULES.values()))]
    assert got == [60.0, 0.0]


def test_pins_device_idle_parts_claim_largest_first_from_an_overflowing_pool(two_streams):
    # Idle 219 us; parts want 150 + 100 us: the larger keeps 150, the smaller the 69 us left.
    first, second = _family("device-idle")[:2]
    found = [_finding(first, "whole run", 100.0), _finding(second, "whole run", 150.0)]
    shared = exclusive_impacts(two_streams, found, list(RULES.values()))
    assert [round(f.impact_us, 6) for f in shared] == [69.0, 150.0]
    assert [f.details.get("impact_before_overlap_us") for f in shared] == [100.0, None]


def test_pins_ranking_tells_impacts_apart_below_one_microsecond():
    # 10.4 us ranks above 10.2 us whatever the codes say (ties are to the ns, not the whole us).
    ranked = rank_findings([_finding("x", "s", 10.2, "AAA001"), _finding("y", "s", 10.4, "ZZZ001")])
    assert [f.code for f in ranked] == ["ZZZ001", "AAA001"]
    ranked = rank_findings([_finding("x", "s", 10.0004, "AAA001"), _finding("y", "s", 10.0006, "ZZZ001")])
    assert [f.code for f in ranked] == ["ZZZ001", "AAA001"]


def test_pins_device_idle_umbrella_keeps_what_the_parts_leave(two_streams):
    # The umbrella wants 200 us, a part 150 us of the 219 us idle: the part claims first, though smaller.
    umbrella = next(r.name for r in RULES.values() if r.impact_family == "device-idle" and r.impact_role == "umbrella")
    found = [_finding(umbrella, "whole run", 200.0), _finding(_family("device-idle")[0], "whole run", 150.0)]
    shared = exclusive_impacts(two_streams, found, list(RULES.values()))
    assert [round(f.impact_us, 6) for f in shared] == [69.0, 150.0]
    assert shared[0].details["claimed_by_other_findings_us"] == 131.0


def test_pins_capped_impact_gets_its_span_share_again(two_streams):
    first, second = _family("operator-time")[:2]
    found = [_finding(second, "B", 50.0), _finding(first, "A", 60.0)]
    shares = {f.subject: round(f.span_share, 6) for f in exclusive_impacts(two_streams, found, list(RULES.values()))}
    assert shares == {"A": 0.2, "B": 0.07}  # of the 300 us span
