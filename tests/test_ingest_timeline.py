"""Timeline JSON reading (trace_view.json / msprof_*.json): real torch_npu traces and small hand-written ones."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

from analyzer.ingest import load_export
from analyzer.ingest.database import append_rows, connect
from analyzer.ingest.step_windows import merge_step_markers
from analyzer.ingest.timeline.timeline_json import create_raw_table, read_arrays_at_once, read_raw_events
from tests.read_context import context_for
from tests.tree_hash import tree_digest

LEVEL1 = "torch_npu_level1_rank0_text"
TRACE = "ASCEND_PROFILER_OUTPUT/trace_view.json"


@pytest.fixture(scope="module")
def level1(real_dir):
    return load_export(real_dir / LEVEL1)


def _meta(pid: int, name: str) -> dict:
    return {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}}


def _x(pid: int, tid: int, name: str, ts: str | float, dur: float, **args) -> dict:
    event = {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        event["args"] = args
    return event


SMALL = [
    _meta(7, "Python"),
    _meta(9, "CANN"),
    _meta(11, "Ascend Hardware"),
    _meta(13, "Overlap Analysis"),
    _meta(15, "HBM"),
    _meta(17, "AI Core Utilization"),
    {"ph": "M", "name": "thread_name", "pid": 11, "tid": 2, "args": {"name": "Stream 2"}},
    _x(7, 1, "ProfilerStep#3", "1736408883000000.001", 500.0),
    _x(7, 1, "aten::add", "1736408883000010.500", 5.25, **{"Call stack": "a.py(1): f;\r\nb.py(2): g"}),
    _x(9, 1, "AscendCL@aclrtSynchronizeStream", "1736408883000020.000", 30.0, level="acl", connection_id=5),
    _x(
        11,
        2,
        "add_kernel",
        "1736408883000060.123",
        2.5,
        **{"Task Type": "AI_CORE", "Physic Stream Id": 2, "Task Id": 41, "connection_id": 5},
    ),
    _x(13, 0, "Computing", "1736408883000060.123", 2.5),
    {
        "ph": "s",
        "name": "HostToDevice5",
        "cat": "HostToDevice",
        "id": "5",
        "pid": 9,
        "tid": 1,
        "ts": "1736408883000020.000",
    },
    {
        "ph": "C",
        "name": "HBM 1/Write",
        "pid": 15,
        "tid": 0,
        "ts": "1736408883000030.000",
        "args": {"Write(MB/s)": 12.5},
    },
    {"ph": "C", "name": "Average", "pid": 17, "tid": 0, "ts": "1736408883000030.000", "args": {"utilization(%)": 40}},
]


def _write_export(folder: Path, events: list, name: str = "trace_view.json", **dump) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(events, **dump), encoding="utf-8")
    return folder


def _kinds(con) -> dict[str, int]:
    return dict(con.execute("SELECT kind, count(*) FROM timeline GROUP BY kind").fetchall())


def _lines(ing) -> list[str]:
    return [p.line() for p in ing.problems]


def test_timeline_level1_real_counts_per_kind(level1):
    assert _kinds(level1.con) == {
        "framework_op": 2459,
        "step_marker": 1,
        "host_api": 707,
        "device_task": 535,
        "communication": 300,
        "overlap": 382,
        "flow": 1217,
    }
    assert level1.con.execute("SELECT count(*) FROM counters").fetchone()[0] == 4431
    assert level1.con.execute("SELECT count(*) FROM ops").fetchone()[0] == 191
    assert not [p for p in level1.problems if p.file.endswith("trace_view.json")]


def test_timeline_level1_real_overlap_totals_match_written_durations(level1):
    totals = dict(
        level1.con.execute("SELECT name, sum(dur_us) FROM timeline WHERE kind = 'overlap' GROUP BY name").fetchall()
    )
    assert totals["Computing"] == pytest.approx(8873.756, abs=1e-6)
    assert totals["Communication(Not Overlapped)"] == pytest.approx(101963.203, abs=1e-6)


def test_timeline_level1_real_step_window_is_exact(level1):
    row = level1.con.execute("SELECT start_ns, end_ns, computing_us FROM steps WHERE step_id = 50").fetchone()
    assert row[0] == 1736408883686740710
    assert row[1] == 1736408883686740710 + 155985800
    assert row[2] == pytest.approx(8873.756, abs=1e-3)  # the step_trace_time row was updated, not duplicated
    assert level1.con.execute("SELECT count(*) FROM steps").fetchone()[0] == 1


def test_timeline_level1_real_start_ns_equal_written_decimal(level1, real_dir):
    events = json.loads((real_dir / LEVEL1 / TRACE).read_text(encoding="utf-8"))
    want = sorted(int(Decimal(e["ts"]) * 1000) for e in events if e["ph"] not in ("M", "C"))
    got = [r[0] for r in level1.con.execute("SELECT start_ns FROM timeline ORDER BY start_ns").fetchall()]
    assert got == want


def test_timeline_level1_real_device_task_and_counter_fields(level1):
    task = level1.con.execute(
        "SELECT stream_id, task_id, task_type, connection_id, thread_name, dur_us, end_ns - start_ns "
        "FROM timeline WHERE kind = 'device_task' AND name = 'MEMCPY_ASYNC' ORDER BY start_ns LIMIT 1"
    ).fetchone()
    assert task == (2, 11049, "PCIE_DMA_SQE", 936, "Stream 2", 840.07675, 840077)
    hbm = level1.con.execute(
        "SELECT value, unit FROM counters WHERE counter = 'hbm_read' AND instance = '0' AND ts_ns = 1736408883594164920"
    ).fetchone()
    assert hbm == (pytest.approx(25.15459934882248), "MB/s")
    mem = level1.con.execute("SELECT DISTINCT unit FROM counters WHERE counter = 'npu_mem_app' AND instance = 'DDR'")
    assert mem.fetchall() == [("KB",)]


def test_timeline_trace_2024_old_stream_key_gives_276_ops(real_dir):
    ing = load_export(real_dir / "torch_npu_trace_2024")
    con = ing.con
    assert con.execute("SELECT count(*) FROM ops").fetchone()[0] == 276
    assert con.execute("SELECT DISTINCT stream_id FROM timeline WHERE kind = 'device_task'").fetchall() == [(3,)]
    assert con.execute("SELECT count(*) FROM steps WHERE source = 'timeline'").fetchone()[0] == 1


def test_timeline_real_exports_left_byte_identical(real_dir):
    before = tree_digest(real_dir / "torch_npu_level0_rank0_text")
    load_export(real_dir / "torch_npu_level0_rank0_text")
    assert tree_digest(real_dir / "torch_npu_level0_rank0_text") == before


def test_timeline_small_array_fills_every_kind_and_counter(tmp_path):
    con = load_export(_write_export(tmp_path / "run", SMALL)).con
    assert _kinds(con) == {
        "step_marker": 1,
        "framework_op": 1,
        "host_api": 1,
        "device_task": 1,
        "overlap": 1,
        "flow": 1,
    }
    assert con.execute("SELECT task_type FROM timeline WHERE kind = 'host_api'").fetchone() == ("acl",)
    assert con.execute("SELECT flow_id, flow_phase, category FROM timeline WHERE kind = 'flow'").fetchone() == (
        "5",
        "s",
        "HostToDevice",
    )
    counters = con.execute("SELECT counter, instance, value, unit FROM counters ORDER BY counter").fetchall()
    assert counters == [("aicore_utilization", "Average", 40.0, "%"), ("hbm_write", "1", 12.5, "MB/s")]
    assert con.execute("SELECT step_id, start_ns, source FROM steps").fetchall() == [
        (3, 1736408883000000001, "timeline")
    ]
    assert con.execute("SELECT step_id FROM ops").fetchall() == [(3,)]


def test_timeline_object_form_and_pretty_print_read_alike(tmp_path):
    flat = load_export(_write_export(tmp_path / "flat", SMALL)).con
    obj = load_export(_write_export(tmp_path / "obj", {"traceEvents": SMALL, "displayTimeUnit": "ns"}, indent=2)).con
    pretty = load_export(_write_export(tmp_path / "pretty", SMALL, indent=2, sort_keys=True)).con
    query = "SELECT * EXCLUDE (run_id) FROM timeline ORDER BY start_ns, name"
    assert obj.execute(query).fetchall() == flat.execute(query).fetchall()
    assert pretty.execute(query).fetchall() == flat.execute(query).fetchall()


def test_timeline_object_form_with_arrays_after_trace_events_reads_events(tmp_path):
    trailing = {"traceEvents": SMALL, "otherData": {"ranks": [0, 1], "note": "x"}, "displayTimeUnit": "ns"}
    ing = load_export(_write_export(tmp_path / "run", trailing))
    assert sum(_kinds(ing.con).values()) == 6
    assert not [line for line in _lines(ing) if not line.startswith("info")]


def test_timeline_object_without_events_is_reported(tmp_path):
    ing = load_export(_write_export(tmp_path / "run", {"otherData": {}}))
    assert any("JSON object with no events" in line for line in _lines(ing))


def test_timeline_numeric_ts_kept_exact(tmp_path):
    events = [_meta(1, "Ascend Hardware"), _x(1, 0, "k", 0.0, 1.0)]
    text = json.dumps(events).replace('0.0, "dur"', '1736408883688177.931, "dur"')
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "trace_view.json").write_text(text, encoding="utf-8")
    con = load_export(tmp_path / "run").con
    assert con.execute("SELECT start_ns FROM timeline").fetchone() == (1736408883688177931,)


def test_timeline_absurd_ts_loses_only_its_own_start(tmp_path):
    """A ts past the BIGINT ns range (a hand-edited trace) made the whole timeline unreadable
    (overflow in ts * 1000); now that event alone has no start, and is reported."""
    events = [
        _meta(1, "Ascend Hardware"),
        _x(1, 0, "k", "1736408883688177.931", 1.0),
        _x(1, 0, "far", "999999999999999999999999999999999.5", 1.0),
        _x(1, 0, "old", "5.0", 1.0),
    ]
    ing = load_export(_write_export(tmp_path / "run", events))
    rows = ing.con.execute("SELECT name, start_ns FROM timeline ORDER BY name").fetchall()
    assert rows == [("far", None), ("k", 1736408883688177931), ("old", 5000)]
    assert any("1 events have a 'ts' too large" in line for line in _lines(ing))


def test_timeline_slices_are_unioned(tmp_path):
    folder = tmp_path / "run"
    _write_export(folder, SMALL[:8], name="msprof_slice_0_20250101000000.json")
    _write_export(folder, SMALL[8:], name="msprof_slice_1_20250101000000.json")
    ing = load_export(folder)
    assert sum(_kinds(ing.con).values()) == 6
    assert ing.con.execute("SELECT count(*) FROM counters").fetchone()[0] == 2


def test_timeline_slices_read_at_once_equal_slices_read_one_by_one(tmp_path):
    """Slices go through one parallel read_json call; its raw rows equal those of each slice read alone."""
    folder = tmp_path / "run"
    _write_export(folder, SMALL[:8], name="msprof_slice_0_20250101000000.json")
    _write_export(folder, SMALL[8:], name="msprof_slice_1_20250101000000.json")
    paths = tuple(sorted(folder.glob("msprof_slice_*.json")))
    con, ctx = connect(), context_for(folder)
    together, alone = create_raw_table(con), create_raw_table(con)
    assert read_arrays_at_once(con, together, paths, ctx)
    for n, path in enumerate(paths):
        assert read_raw_events(con, alone, path, n, ctx)
    rows = [sorted(con.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in (together, alone)]
    assert rows[0] == rows[1] and len(rows[0]) == len(SMALL)
    assert {r[0] for r in rows[0]} == {0, 1} and not ctx.problems


def test_timeline_truncated_slice_beside_good_one_is_salvaged_and_named(tmp_path):
    """When the parallel read of the slices fails, each slice is read alone, with its own diagnosis."""
    folder = tmp_path / "run"
    _write_export(folder, SMALL[:8], name="msprof_slice_0_20250101000000.json")
    text = json.dumps(SMALL[8:])
    (folder / "msprof_slice_1_20250101000000.json").write_text(text[: text.rindex("{") + 10], encoding="utf-8")
    ing = load_export(folder)
    lines = _lines(ing)
    assert any("msprof_slice_1_" in line and "truncated JSON" in line for line in lines), lines
    assert not any("msprof_slice_0_" in line for line in lines), lines
    assert ing.con.execute("SELECT count(*) FROM timeline WHERE name = 'ProfilerStep#3'").fetchone()[0] == 1


def test_timeline_process_meaning_comes_only_from_process_name(tmp_path):
    events = [
        _meta(11, "CANN"),
        _meta(7, "Ascend Hardware"),
        _x(11, 3, "Runtime@launch", "10.000", 1.0, level="runtime"),
    ]
    con = load_export(_write_export(tmp_path / "run", events)).con
    assert con.execute("SELECT kind, process, task_type FROM timeline").fetchone() == ("host_api", "CANN", "runtime")


def test_timeline_empty_file_is_reported_not_raised(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "trace_view.json").write_bytes(b"")
    ing = load_export(tmp_path / "run")
    assert any("empty file (0 bytes)" in line for line in _lines(ing))


def test_timeline_not_json_is_reported_not_raised(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "trace_view.json").write_text("Time,Name\n1,a\n", encoding="utf-8")
    ing = load_export(tmp_path / "run")
    assert any("not a JSON trace" in line and "byte 0" in line for line in _lines(ing))


def test_timeline_truncated_array_salvages_complete_events(tmp_path):
    folder = tmp_path / "run"
    text = json.dumps(SMALL)
    cut = text.index('"AscendCL@aclrtSynchronizeStream"') + 5
    folder.mkdir()
    (folder / "trace_view.json").write_text(text[:cut], encoding="utf-8")
    before = tree_digest(folder)
    ing = load_export(folder)
    assert _kinds(ing.con) == {"step_marker": 1, "framework_op": 1}
    assert any("truncated JSON" in line and f"byte {cut}" in line for line in _lines(ing))
    assert tree_digest(folder) == before


def test_timeline_events_missing_fields_are_counted(tmp_path):
    events = [
        _meta(7, "Python"),
        _x(7, 1, "ok", "5.000", 1.0),
        {"ph": "X", "name": "no_ts", "pid": 7, "tid": 1},
        _x(7, 1, "bad_ts", "soon", 1.0),
        {"ph": "X", "name": "no_dur", "pid": 7, "tid": 1, "ts": "6.0"},
        42,
        {"name": "no_ph"},
    ]
    ing = load_export(_write_export(tmp_path / "run", events))
    names = [r[0] for r in ing.con.execute("SELECT name FROM timeline ORDER BY name").fetchall()]
    assert names == ["no_dur", "ok"]
    lines = _lines(ing)
    assert any("2 events have no usable 'ts'" in line for line in lines)
    assert any("2 array elements are not trace events" in line for line in lines)
    assert any("1 complete ('X') events have no usable 'dur'" in line for line in lines)


def test_step_windows_update_existing_step_row(con):
    con.execute("INSERT INTO steps (run_id, step_id, computing_us, source) VALUES ('r', 7, 12.5, 'step_trace_time')")
    append_rows(
        con,
        "timeline",
        "SELECT * FROM (VALUES ('r', 'step_marker', 'ProfilerStep#7', 100, 900), "
        "('r', 'step_marker', 'ProfilerStep#8', 900, 1500)) v(run_id, kind, name, start_ns, end_ns)",
    )
    merge_step_markers(con, "r")
    rows = con.execute("SELECT step_id, start_ns, end_ns, computing_us, source FROM steps ORDER BY step_id").fetchall()
    assert rows == [(7, 100, 900, 12.5, "step_trace_time"), (8, 900, 1500, None, "timeline")]


def test_timeline_flows_left_out_are_not_kept_raw_yet_their_problems_are_counted(tmp_path):
    """A diagnosis leaves flows out: the raw table keeps none but those with a problem, and every
    problem is still reported as when flows are kept."""
    no_ts_flow = {"ph": "f", "name": "HostToDevice6", "cat": "HostToDevice", "id": "6", "pid": 9, "tid": 1}
    folder = _write_export(tmp_path / "run", [*SMALL, no_ts_flow])
    ctx = replace(context_for(folder), left_out_kinds=frozenset({"flow"}))
    con = connect()
    raw = create_raw_table(con)
    assert read_raw_events(con, raw, folder / "trace_view.json", 0, ctx)
    assert con.execute(f"SELECT name FROM {raw} WHERE ph IN ('s', 't', 'f')").fetchall() == [("HostToDevice6",)]
    kept, left_out = load_export(folder), load_export(folder, left_out_kinds=frozenset({"flow"}))
    assert _kinds(left_out.con) == {k: n for k, n in _kinds(kept.con).items() if k != "flow"}
    assert _lines(left_out) == _lines(kept) and any("1 events have no usable 'ts'" in s for s in _lines(kept))
