"""chip.sql: each run's nominal chip values, from the chip table (chip_table.toml) with --set chip.KEY overrides."""

from __future__ import annotations

from analyzer.rule_engine.views import create_views
from tests.views.view_case import database, module_database, rows

# b4: the longest prefix wins (Ascend910B4 over Ascend910B and Ascend910); lower: matched without case, the
# name differs from the row's (assumed); own: its own AI Core count; none: no chip, the default; opsonly:
# named only by ops (no runs row).
RUNS = """
run_id,chip,ai_core_count
b4,Ascend910B4,
lower,ascend910b3x,
own,Ascend910B1,22
none,,
"""
OPS = """
run_id,op_name
opsonly,x
"""
COLUMNS = "run_id, chip, chip_assumed, ai_core_count, hbm_gb_per_s, gap_threshold_us, device_memory_gb"

con = module_database(runs=RUNS, ops=OPS)


def test_run_nominal_takes_the_longest_chip_prefix_else_the_default(con):
    assert rows(con, f"SELECT {COLUMNS} FROM _run_nominal ORDER BY run_id") == [
        ("b4", "Ascend910B4", False, 20, 800.0, 200.0, 32.0),
        ("lower", "Ascend910B3", True, 20, 1600.0, 200.0, 64.0),
        ("none", "Ascend910B", True, 24, 1600.0, 200.0, 64.0),
        ("opsonly", "Ascend910B", True, 24, 1600.0, 200.0, 64.0),
        ("own", "Ascend910B1", False, 22, 1600.0, 200.0, 64.0),
    ]
    assert rows(con, "SELECT * EXCLUDE (run_id, chip, chip_assumed) FROM _run_nominal WHERE run_id = 'b4'") == [
        (20, 1800.0, 800.0, 392.0, 25.0, 20.0, 200.0, 2.0, 32.0, 280.0)
    ]


def test_run_nominal_applies_chip_overrides_an_overridden_core_count_wins_over_the_runs():
    con = database(runs=RUNS, ops=OPS)
    create_views(con, {"ai_core_count": 30, "hbm_gb_per_s": 900})
    assert rows(con, f"SELECT {COLUMNS} FROM _run_nominal WHERE run_id IN ('b4', 'own') ORDER BY run_id") == [
        ("b4", "Ascend910B4", False, 30, 900.0, 200.0, 32.0),
        ("own", "Ascend910B1", False, 30, 900.0, 200.0, 64.0),
    ]
    con.close()
