"""A host event explains a device gap only where it explains the device's idleness (issue 45): a synchronize
the host spends waiting while queued work runs does not cause the device's own 1-2 us task switches."""

from __future__ import annotations

import pytest

from analyzer.rule_engine.fixture_tables import load_fixture_tables
from analyzer.rule_engine.model import ConfiguredRules
from analyzer.rule_engine.runner import run_rules
from analyzer.rule_engine.views.build import create_views
from tests.rule_cases import FIXTURES_DIR, RULES

_CAUSES = "SELECT cause, count(*), round(sum(gap_us), 1) FROM _classified_gaps GROUP BY ALL ORDER BY 1"


@pytest.mark.slow
def test_a_synchronize_over_queued_work_explains_only_the_gap_it_made_in_either_layout(con):
    # The native layout's CANN API synchronize spans the whole queue; the torch_npu layout's timeline of the
    # same run has no such call. Either way the small switches have no cause and inter-op-gap stays silent.
    run_ids = load_fixture_tables(con, FIXTURES_DIR / "inter-op-gap" / "silent_sync_over_queued_work")
    create_views(con)
    assert con.execute(_CAUSES).fetchall() == [("host_sync", 1, 51.5), ("unattributed", 199, 298.5)]
    native, _ = run_rules(con, ConfiguredRules((RULES["inter-op-gap"],)), run_ids)
    con.execute("DELETE FROM timeline")  # the torch_npu layout: no CANN API call on the timeline
    create_views(con)
    assert con.execute(_CAUSES).fetchall() == [("unattributed", 200, 350.0)]
    torch, _ = run_rules(con, ConfiguredRules((RULES["inter-op-gap"],)), run_ids)
    assert native == torch == []
