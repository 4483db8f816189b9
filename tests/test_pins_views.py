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
