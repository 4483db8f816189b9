"""Readers pinned at their edges: rows a reader must keep, with their numbers in the table's units."""

from __future__ import annotations

import json

from analyzer.ingest import load_export


def _x(pid: int, tid: int, name: str, ts: str, dur: float, **args) -> dict:
    return {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def test_pins_trace_events_of_zero_duration_are_kept_without_a_problem(tmp_path):
    events = [
        {"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "Python"}},
        {"ph": "M", "name": "process_name", "pid": 11, "tid": 0, "args": {"name": "Ascend Hardware"}},
        _x(7, 1, "aten::empty", "1736408883000010.500", 0.0),
        _x(11, 2, "add_kernel", "1736408883000060.123", 2.5, **{"Task Type": "AI_CORE", "Physic Stream Id": 2}),
        _x(11, 2, "noop_kernel", "1736408883000070.000", 0.0, **{"Task Type": "AI_CORE", "Physic Stream Id": 2}),
    ]
    (tmp_path / "trace_view.json").write_text(json.dumps(events), encoding="utf-8")
    ing = load_export(tmp_path)
    rows = ing.con.execute("SELECT name, dur_us, end_ns - start_ns FROM timeline ORDER BY start_ns").fetchall()
    assert rows == [("aten::empty", 0.0, 0), ("add_kernel", 2.5, 2500), ("noop_kernel", 0.0, 0)]
    assert [p.line() for p in ing.problems if "dur" in p.line()] == []
