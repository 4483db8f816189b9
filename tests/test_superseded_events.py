"""Device tasks the task_time rows supersede, deleted from the raw table as the timeline JSON is read
(timeline/superseded_events.py)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from analyzer.ingest.database import connect
from analyzer.ingest.loader import load_export
from analyzer.ingest.timeline.superseded_events import SupersededTasks
from analyzer.ingest.timeline.timeline import load_timeline
from analyzer.ingest.timeline.timeline_json import create_raw_table, read_arrays_at_once
from analyzer.ingest.timeline.track_heads import head_tracks, tracks_of_kind
from fixtures.generator import write_export
from tests.read_context import context_for


def _meta(pid: int, name: str) -> dict:
    return {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}}


def _task(pid: int, name: str, ts: str, task: int, **fields) -> dict:
    args = {"Task Type": "AI_CORE", "Physic Stream Id": 2, "Task Id": task}
    return {"ph": "X", "name": name, "pid": pid, "tid": 1, "ts": ts, "dur": 2.5, "args": args, **fields}


HEAD = [_meta(9, "CANN"), _meta(11, "Ascend Hardware")]
TASKS = [
    _task(11, "add_kernel", "1736408883000060.123", 41),  # the CSV's task: superseded
    _task(11, "mul_kernel", "1736408883000070.000", 42),  # not in the CSV: kept
    _task(11, "no_dur_twin", "1736408883000060.123", 41, dur=None),  # superseded, but counted as a problem
    {"ph": "X", "name": "AscendCL@launch", "pid": 9, "tid": 1, "ts": "1736408883000050.000", "dur": 3.0},
]


def _write(folder: Path, slices: list[list[dict]]) -> tuple[Path, ...]:
    folder.mkdir(parents=True, exist_ok=True)
    for n, events in enumerate(slices):
        (folder / f"msprof_slice_{n}_20250101000000.json").write_text(json.dumps(events), encoding="utf-8")
    return tuple(sorted(folder.glob("msprof_slice_*.json")))


def _with_csv_task() -> duckdb.DuckDBPyConnection:
    """A connection whose run holds task 41 of stream 2 as task_time's row (naming its device) does."""
    con = connect()
    con.execute(
        "INSERT INTO timeline (run_id, device_id, kind, name, start_ns, dur_us, stream_id, task_id) "
        "VALUES ('run', 0, 'device_task', 'csv_add', 1736408883000060123, 2.5, 2, 41)"
    )
    return con


def _device_rows(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute(
        "SELECT name, device_id FROM timeline WHERE run_id = 'run' AND kind = 'device_task' ORDER BY rowid"
    ).fetchall()


def test_device_tasks_the_run_holds_are_never_stored(tmp_path):
    paths = _write(tmp_path / "run", [HEAD, TASKS])
    assert tracks_of_kind(head_tracks(paths), "device_task") == {"11": "Ascend Hardware"}
    con = _with_csv_task()
    superseded = SupersededTasks.of_run(con, "run", ("11",))
    assert superseded is not None and SupersededTasks.of_run(connect(), "run", ("11",)) is None
    raw = create_raw_table(con)
    assert read_arrays_at_once(con, raw, paths, context_for(tmp_path / "run"), (), superseded)
    stored = con.execute(f"SELECT name FROM {raw} WHERE pid = '11' AND ph = 'X' ORDER BY name").fetchall()
    assert stored == [("mul_kernel",), ("no_dur_twin",)]  # the one with a problem stays, to be counted

    ctx = context_for(tmp_path / "run")
    assert load_timeline(con := _with_csv_task(), paths, ctx) == 2  # the host call and mul_kernel
    assert _device_rows(con) == [("csv_add", 0), ("mul_kernel", None)]
    assert any("1 complete ('X') events have no usable 'dur'" in p.line() for p in ctx.problems)


def test_a_head_naming_a_host_track_a_device_track_is_read_again_whole(tmp_path):
    """A copy of a process_name event inside another event's args names pid 9 'Ascend Hardware' in the head;
    its real process_name, past the first MiB, says CANN: its event keyed like the CSV's task is no device task
    and stays."""
    decoy = {**TASKS[3], "name": "aten::copy", "args": {"saved": _meta(9, "Ascend Hardware")}}
    host_twin = {**_task(9, "AscendCL@twin", "1736408883000060.123", 41)}
    padding = [{**TASKS[3], "name": f"pad_{i}"} for i in range(12000)]
    paths = _write(tmp_path / "run", [[_meta(11, "Ascend Hardware"), decoy, *padding, _meta(9, "CANN"), host_twin]])
    assert tracks_of_kind(head_tracks(paths), "device_task") == {"9": "Ascend Hardware", "11": "Ascend Hardware"}
    con = _with_csv_task()
    load_timeline(con, paths, context_for(tmp_path / "run"))
    assert con.execute("SELECT kind FROM timeline WHERE name = 'AscendCL@twin'").fetchall() == [("host_api",)]


def _timeline_in_table_order(export: Path, threads: int) -> list[tuple]:
    """The run's timeline rows as the table holds them (rowid order), read on ``threads`` DuckDB threads."""
    con = load_export(export, connect(threads=threads)).con
    return con.execute("SELECT kind, name, start_ns, stream_id, task_id FROM timeline ORDER BY rowid").fetchall()


@pytest.mark.slow  # a sliced export read three times
def test_a_sliced_export_gives_its_timeline_rows_in_one_order_on_any_number_of_threads(tmp_path):
    # Many slices, parsed in parallel, and more raw rows than DuckDB reads on one thread. While the superseded
    # tasks were left out by an anti join as the slices were read, and while the raw rows went into the timeline
    # in the order its name joins gave them, its rows came in another order on every read on two threads.
    export = tmp_path / "run"
    write_export("large_host_gaps", export, layout="msprof", seed=3, tasks=40000, slice_rows=10000)
    assert len(list(export.rglob("msprof_slice_*.json"))) > 4
    alone = _timeline_in_table_order(export, 1)
    assert len(alone) > 250_000
    assert _timeline_in_table_order(export, 2) == alone
    assert _timeline_in_table_order(export, 2) == alone
