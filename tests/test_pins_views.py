"""Helper views pinned at their edges: gaps on a step boundary, what a boundary counts on each side."""

from __future__ import annotations

from pathlib import Path

from analyzer.rule_engine.fixture_tables import load_fixture_tables
from analyzer.rule_engine.views.build import create_views


def _load(con, folder: Path, **tables: str) -> None:
    for name, text in tables.items():
        (folder / f"{name}.csv").write_text(text, encoding="utf-8")
    load_fixture_tables(con, folder)
    create_views(con)


# Steps 1 [0, 100) us and 2 [100, 300) us; the ops carry no step. Gaps: 100-150 us (it starts exactly
# where step 2 starts), 300-350 us (it starts exactly where step 2 ends: no step holds it, and the task
# after it has none).
_STEPS = """run_id,device_id,step_id,start_ns,end_ns
r,0,1,0,100000
r,0,2,100000,300000
"""
_OPS = """run_id,device_id,stream_id,step_id,op_name,op_type,task_type,start_ns,dur_us,end_ns
r,0,1,,X,Add,AI_CORE,0,100,100000
r,0,1,,Y,Add,AI_CORE,150000,50,200000
r,0,1,,Z,Add,AI_CORE,200000,100,300000
r,0,1,,W,Add,AI_CORE,350000,50,400000
"""


def test_pins_gap_starting_at_a_step_start_belongs_to_that_step(con, tmp_path):
    _load(con, tmp_path, steps=_STEPS, ops=_OPS)
    rows = con.execute("SELECT start_ns, end_ns, gap_us, step_id FROM _device_gaps ORDER BY start_ns").fetchall()
    assert rows == [(100000, 150000, 50.0, 2), (300000, 350000, 50.0, None)]


def _ops(*rows: tuple[str, int, int, int]) -> str:
    """ops.csv of (name, stream, start us, end us) rows of one device."""
    lines = ["run_id,device_id,stream_id,step_id,op_name,op_type,task_type,start_ns,dur_us,end_ns"]
    lines += [f"r,0,{s},,{n},Add,AI_CORE,{a * 1000},{b - a},{b * 1000}" for n, s, a, b in rows]
    return "\n".join(lines) + "\n"


def test_pins_back_to_back_tasks_are_one_busy_interval_with_no_gap_between(con, tmp_path):
    # X ends where Y starts (one island, no 0 us gap); Z follows 50 us later.
    _load(con, tmp_path, ops=_ops(("X", 1, 0, 100), ("Y", 1, 100, 150), ("Z", 1, 200, 250)))
    for relation in ("_busy_intervals", "_active_intervals"):
        got = con.execute(f"SELECT start_ns, end_ns, task_count FROM {relation} ORDER BY start_ns").fetchall()
        assert got == [(0, 150000, 2), (200000, 250000, 1)], relation
    assert con.execute("SELECT start_ns, end_ns, op_before, op_after FROM _device_gaps").fetchall() == [
        (150000, 200000, "Y", "Z")
    ]
    assert con.execute("SELECT start_ns, end_ns FROM _stream_gaps").fetchall() == [(150000, 200000)]


def test_pins_breakdown_gap_of_exactly_the_threshold_is_a_long_gap(con, tmp_path):
    # gaps of 200 us (the default gap_threshold_us: a long gap) and 199 us (a launch gap)
    _load(con, tmp_path, ops=_ops(("A", 1, 0, 100), ("B", 1, 300, 400), ("C", 1, 599, 700)))
    assert con.execute("SELECT gap_threshold_us FROM _run_nominal").fetchall() == [(200.0,)]
    row = con.execute(
        "SELECT long_gap_count, gap_unattributed, launch_gap_count, launch_gaps FROM _window_measures "
        "WHERE window_no = 1"
    ).fetchall()
    assert row == [(1, 200000, 1, 199000)]
