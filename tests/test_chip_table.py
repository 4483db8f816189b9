"""The chip table: a run's chip name picks its nominal values; --set chip.KEY=VALUE overrides them."""

from __future__ import annotations

import pytest

from analyzer.rule_engine.params import ParamError, check_overrides
from analyzer.rule_engine.views import create_views


def _runs(con) -> None:
    con.execute(
        "INSERT INTO runs (run_id, chip, ai_core_count) VALUES "
        "('b4', 'Ascend910B4', NULL), ('p3', 'Ascend310P3', NULL), ('none', NULL, NULL), ('own', 'Ascend910B1', 20)"
    )


def _nominal(con) -> dict:
    rows = con.execute(
        "SELECT run_id, chip, chip_assumed, ai_core_count, aicore_mhz, hbm_gb_per_s, gap_threshold_us "
        "FROM _run_nominal ORDER BY run_id"
    ).fetchall()
    return {r[0]: r[1:] for r in rows}


def test_chip_table_run_chip_name_picks_longest_prefix_and_own_core_count_wins(con):
    _runs(con)
    create_views(con)
    got = _nominal(con)
    assert got["b4"] == ("Ascend910B4", False, 20, 1800.0, 800.0, 200.0)
    assert got["p3"] == ("Ascend310P", True, 8, 1080.0, 204.8, 200.0)
    assert got["none"] == ("Ascend910B", True, 24, 1800.0, 1600.0, 200.0)
    assert got["own"][2] == 20  # the run's recorded core count, not the table's 24


def test_chip_table_overrides_apply_to_every_run_and_rebuild_the_views(con):
    _runs(con)
    create_views(con)
    create_views(con, {"hbm_gb_per_s": 900, "gap_threshold_us": 50})
    assert {v[4] for v in _nominal(con).values()} == {900.0}
    create_views(con)  # without overrides, the last ones are kept
    assert {v[5] for v in _nominal(con).values()} == {50.0}


@pytest.mark.parametrize(("values", "problem"), [({"mhz": 1}, "unknown nominal value"), ({"launch_us": 0}, "positive")])
def test_chip_table_bad_override_is_a_param_error(values, problem):
    with pytest.raises(ParamError, match=problem):
        check_overrides({"chip": values}, [])
