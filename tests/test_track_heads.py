"""Tracks left out before the read (ingest/timeline/track_heads.py): skipped only where the heads tell the truth."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from analyzer.ingest import load_export
from analyzer.ingest.database import connect
from analyzer.ingest.timeline.timeline_json import create_raw_table, read_arrays_at_once
from analyzer.ingest.timeline.track_heads import head_tracks, skipped_tracks, tracks_of_kind
from tests.read_context import context_for

LEFT_OUT = frozenset({"flow", "overlap"})


def _meta(pid: int, name: str) -> dict:
    return {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}}


def _x(pid: int, name: str, ts: str, **args) -> dict:
    return {"ph": "X", "name": name, "pid": pid, "tid": 1, "ts": ts, "dur": 2.5, "args": args}


EVENTS = [
    _meta(9, "CANN"),
    _meta(11, "Ascend Hardware"),
    _meta(13, "Overlap Analysis"),
    _meta(7, "Python"),
    _x(9, "AscendCL@aclrtSynchronizeStream", "1736408883000020.000", level="acl", connection_id=5),
    _x(11, "add_kernel", "1736408883000060.123", **{"Task Type": "AI_CORE", "Physic Stream Id": 2, "Task Id": 41}),
    _x(13, "Computing", "1736408883000060.123"),
    {"ph": "X", "name": "Free", "pid": 13, "tid": 2, "dur": 1.0},  # no ts: counted though its track is skipped
    _x(7, "ProfilerStep#1", "1736408883000000.000"),
]


def _write(folder: Path, slices: list[list[dict]]) -> tuple[Path, ...]:
    """Slices whose names sort in their order; the heads read are the first MiB of each."""
    folder.mkdir(parents=True, exist_ok=True)
    for n, events in enumerate(slices):
        (folder / f"msprof_slice_{n}_20250101000000.json").write_text(json.dumps(events), encoding="utf-8")
    return tuple(sorted(folder.glob("msprof_slice_*.json")))


def _timeline(ing) -> list[tuple]:
    return ing.con.execute("SELECT * EXCLUDE (run_id) FROM timeline WHERE kind <> 'overlap' ORDER BY rowid").fetchall()


def _same_as_read_whole(folder: Path) -> None:
    """Leaving overlap out gives the rows and the problems of reading it and dropping its rows."""
    skipping, whole = load_export(folder, left_out_kinds=LEFT_OUT), load_export(folder, left_out_kinds={"flow"})
    assert _timeline(skipping) == _timeline(whole) and len(_timeline(whole)) >= 3
    assert [p.line() for p in skipping.problems] == [p.line() for p in whole.problems]


def test_left_out_tracks_named_by_the_heads_are_never_stored(tmp_path):
    paths = _write(tmp_path / "run", [EVENTS[:5], EVENTS[5:]])
    assert skipped_tracks(head_tracks(paths), LEFT_OUT) == {"13": "Overlap Analysis"}
    assert skipped_tracks(head_tracks(paths), frozenset({"framework_op", "flow"})) == {}  # not Python: step markers
    con, ctx = connect(), replace(context_for(tmp_path / "run"), left_out_kinds=LEFT_OUT)
    raw = create_raw_table(con)
    assert read_arrays_at_once(con, raw, paths, ctx, ("13",))
    rows = con.execute(f"SELECT ph, name FROM {raw} WHERE pid = '13' ORDER BY name").fetchall()
    assert rows == [("X", "Free"), ("M", "process_name")]  # the event with a problem stays, to be counted
    _same_as_read_whole(tmp_path / "run")


@pytest.mark.slow
def test_a_head_that_misleads_is_read_again_whole(tmp_path):
    """A copy of a process_name event inside another event's args looks like one to the head, and the real
    one comes past the head: the track is CANN's, and its events are all kept."""
    decoy = _x(7, "aten::copy", "1736408883000001.000", saved=_meta(9, "Overlap Analysis"))
    paths = _write(tmp_path / "two", [[decoy, *EVENTS[:5]], EVENTS[5:]])
    assert skipped_tracks(head_tracks(paths), LEFT_OUT) == {"13": "Overlap Analysis"}  # pid 9 has two names
    padding = [_x(7, f"aten::pad_{i}", "1736408883000002.000") for i in range(12000)]  # past the first MiB
    rest = [e for e in EVENTS if e != _meta(9, "CANN")]
    paths = _write(tmp_path / "one", [[decoy, *padding, _meta(9, "CANN"), *rest]])
    assert skipped_tracks(head_tracks(paths), LEFT_OUT) == {"9": "Overlap Analysis"}
    _same_as_read_whole(tmp_path / "one")
    ing = load_export(tmp_path / "one", left_out_kinds=LEFT_OUT)
    assert ing.con.execute("SELECT name FROM timeline WHERE kind = 'host_api'").fetchall() == [
        ("AscendCL@aclrtSynchronizeStream",)
    ]


def test_events_without_a_pid_or_of_a_pid_no_metadata_names_are_kept_as_a_whole_read_keeps_them(tmp_path):
    """A decoy head names pid 21, which has no process_name event of its own, and one event has no pid: the
    whole read keeps both (kind 'other', the unnamed process warned of), so the skipping read must too."""
    decoy = _x(7, "aten::copy", "1736408883000001.000", saved=_meta(21, "Overlap Analysis"))
    orphan = {"ph": "X", "name": "orphan", "tid": 1, "ts": "1736408883000070.000", "dur": 1.0}
    mystery = _x(21, "mystery", "1736408883000080.000")
    paths = _write(tmp_path / "run", [[decoy, *EVENTS[:5]], [*EVENTS[5:], orphan, mystery]])
    assert skipped_tracks(head_tracks(paths), LEFT_OUT) == {"13": "Overlap Analysis", "21": "Overlap Analysis"}
    _same_as_read_whole(tmp_path / "run")
    names = {
        n
        for (n,) in load_export(tmp_path / "run", left_out_kinds=LEFT_OUT)
        .con.execute("SELECT name FROM timeline")
        .fetchall()
    }
    assert {"orphan", "mystery"} <= names


@pytest.mark.slow
def test_host_call_tracks_named_by_the_heads_keep_a_host_calls_args_values(tmp_path):
    """Of a head-named CANN track only connection_id and level are extracted; a head that names a device track
    CANN (a decoy; the real process_name past the first MiB) is read again whole: its task keeps its ids."""
    decoy = _x(7, "aten::copy", "1736408883000001.000", saved=_meta(11, "CANN"))
    padding = [_x(7, f"aten::pad_{i}", "1736408883000002.000") for i in range(12000)]
    rest = [e for e in EVENTS if e not in (_meta(9, "CANN"), _meta(11, "Ascend Hardware"))]
    paths = _write(tmp_path / "run", [[_meta(9, "CANN"), decoy, *padding, _meta(11, "Ascend Hardware"), *rest]])
    assert tracks_of_kind(head_tracks(paths), "host_api") == {"9": "CANN", "11": "CANN"}
    con = connect()
    raw = create_raw_table(con)
    assert read_arrays_at_once(con, raw, paths, context_for(tmp_path / "run"), hosts=("9",))
    assert con.execute(f"SELECT len(arg_fields) FROM {raw} WHERE pid = '9' AND ph = 'X'").fetchall() == [(2,)]
    rows = load_export(tmp_path / "run", left_out_kinds=LEFT_OUT).con.execute(
        "SELECT kind, stream_id, task_id, task_type, connection_id FROM timeline "
        "WHERE name IN ('add_kernel', 'AscendCL@aclrtSynchronizeStream') ORDER BY name"
    )
    assert rows.fetchall() == [("host_api", None, None, "acl", 5), ("device_task", 2, 41, "AI_CORE", None)]
