"""A lone big timeline file cut in two (head beside the CSVs, tail after them) gives the rows of a
whole-file read, in file order; a cut that does not parse, or a tail never parsed, falls back."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import duckdb
import pytest

from analyzer.ingest import (
    load_export,
    loader,
    numbered_rows,
    op_summary,
    timeline_json,
    timeline_tail,
)
from analyzer.ingest.database import connect
from analyzer.ingest.timeline_json import create_raw_table, read_raw_events
from analyzer.ingest.timeline_tail import plan_tail
from fixtures.generator import write_export
from tests.read_context import context_for
from tests.trace_events import string_across_the_middle, trace_events
from tests.tree_hash import tree_digest


@pytest.fixture
def small_cuts(monkeypatch):
    """Cut files from 4 KB on, with tails of at least 1 KB (instead of 32 MiB / 8 MiB)."""
    monkeypatch.setattr(timeline_tail, "CUT_MIN_BYTES", 4000)
    monkeypatch.setattr(timeline_tail, "TAIL_MIN_BYTES", 1000)


def _rows(con: duckdb.DuckDBPyConnection, raw: str) -> list[tuple]:
    return con.execute(f"SELECT * FROM {raw} ORDER BY rowid").fetchall()


def _cut_read(con: duckdb.DuckDBPyConnection, handoff: timeline_tail.TailHandoff) -> tuple[bool, list[tuple]]:
    """What the loader's two threads do: the head read on a cursor in a side thread (into that
    cursor's TEMP raw table), the tail parsed on ``con``; returns the side's outcome and rows."""
    cursor = con.cursor()
    raw = create_raw_table(cursor)
    outcome = {}
    side = threading.Thread(target=lambda: outcome.update(ok=handoff.read_into(cursor, raw)))
    side.start()
    handoff.parse_tail(con)
    side.join()
    return outcome["ok"], _rows(cursor, raw)


def _whole_rows(path: Path) -> list[tuple]:
    con = connect()
    raw = create_raw_table(con)
    assert read_raw_events(con, raw, path, 0, context_for(path.parent))
    return _rows(con, raw)


@pytest.mark.parametrize("dump", [{}, {"separators": (",", ":")}, {"indent": 1}], ids=["spaced", "compact", "indented"])
def test_cut_read_gives_the_raw_rows_of_a_whole_read_in_file_order(small_cuts, tmp_path, dump):
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(trace_events(60), ensure_ascii=False, **dump), encoding="utf-8")
    handoff = plan_tail((path,), other_bytes=0)
    assert handoff is not None and 0 < handoff.head_end < handoff.tail_begin < path.stat().st_size
    ok, rows = _cut_read(connect(), handoff)
    assert ok
    assert rows == _whole_rows(path) and len(rows) == 4 + 4 * 60
    assert [p.name for p in handoff.folder.iterdir()] == ["tail.json"]  # the head is gone once read
    handoff.discard()
    assert not handoff.folder.exists()


def test_the_cut_moves_towards_the_end_as_the_csvs_grow(small_cuts, tmp_path):
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(trace_events(200)), encoding="utf-8")
    size = path.stat().st_size
    alone = plan_tail((path,), other_bytes=0)
    beside = plan_tail((path,), other_bytes=size // 10)
    assert abs(alone.head_end - size / 2) < size / 20  # no CSV: halves
    assert beside.head_end > alone.head_end + size // 10  # the main thread reads CSVs first
    assert plan_tail((path,), other_bytes=size) is None  # the CSVs alone outlast the whole parse
    for handoff in (alone, beside):  # never parsed: the side thread gives up, inserting nothing
        handoff.abandon()
        con = connect()
        raw = create_raw_table(con)
        assert not handoff.read_into(con, raw) and _rows(con, raw) == []


def test_no_cut_for_small_files_objects_slices_or_missing_files(small_cuts, tmp_path):
    array, obj, small = tmp_path / "a.json", tmp_path / "o.json", tmp_path / "s.json"
    array.write_text(json.dumps(trace_events(60)), encoding="utf-8")
    obj.write_text(json.dumps({"traceEvents": trace_events(60)}), encoding="utf-8")
    small.write_text(json.dumps(trace_events(1)), encoding="utf-8")
    assert plan_tail((obj,), 0) is None and plan_tail((small,), 0) is None
    assert plan_tail((array, array), 0) is None and plan_tail((tmp_path / "missing.json",), 0) is None


@pytest.mark.parametrize("filler", ["}, {", '}, {"ph": "X"}, {', "}   ,  {"])
def test_a_cut_inside_a_string_inserts_nothing(small_cuts, tmp_path, filler):
    """The separator found at the cut is inside a name: the head piece does not parse, so nothing
    is kept (the reader then reads the file whole), and the tail's table is dropped."""
    path = string_across_the_middle(tmp_path, filler)
    handoff = plan_tail((path,), other_bytes=0)
    text = path.read_bytes()
    name_at = text.index(b'"xxx')
    assert name_at < handoff.head_end < text.index(b'y"', name_at)  # inside the name
    con = connect()
    ok, rows = _cut_read(con, handoff)
    assert not ok and rows == []
    assert (
        con.execute(f"SELECT count(*) FROM duckdb_tables() WHERE database_name = '{timeline_tail.CATALOG}'").fetchone()[
            0
        ]
        == 0
    )


def _torch_export(tmp_path: Path) -> Path:
    return write_export("host_sync_low_util", tmp_path / "exports")[0]


def _tables(folder: Path) -> dict[str, list]:
    ing = load_export(folder)
    return {
        "problems": [p.line() for p in ing.problems],
        # In insertion order: the stored rows, by rowid.
        "timeline": ing.con.execute(f"SELECT * FROM {numbered_rows.ROWS['timeline']} ORDER BY rowid").fetchall(),
        "counters": ing.con.execute("SELECT * FROM counters ORDER BY ALL").fetchall(),
        "ops": ing.con.execute("SELECT * FROM ops ORDER BY ALL").fetchall(),
        "steps": ing.con.execute("SELECT * FROM steps ORDER BY ALL").fetchall(),
    }


def test_loader_cuts_a_big_trace_beside_the_csvs_and_gets_the_same_tables(tmp_path, monkeypatch):
    folder = _torch_export(tmp_path)
    whole = _tables(folder)
    trace = next(folder.rglob("trace_view.json"))
    monkeypatch.setattr(timeline_tail, "CUT_MIN_BYTES", trace.stat().st_size // 2)
    monkeypatch.setattr(timeline_tail, "TAIL_MIN_BYTES", 1000)
    cuts = []
    real_read_into = timeline_tail.TailHandoff.read_into

    def read_into(self, con, raw):
        cuts.append(real_read_into(self, con, raw))
        return cuts[-1]

    monkeypatch.setattr(timeline_tail.TailHandoff, "read_into", read_into)
    private = tmp_path / "private_tmp"
    private.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(private))
    digest = tree_digest(folder)
    assert _tables(folder) == whole
    assert cuts == [True]  # the file was read in two pieces, not whole
    assert tree_digest(folder) == digest and list(private.iterdir()) == []  # pieces never beside


def test_a_main_thread_that_stops_early_does_not_leave_the_side_thread_waiting(tmp_path, monkeypatch):
    """An out-of-memory error in a CSV reader ends the main thread's work before the tail: the side
    thread gives up its wait, and the error reaches the caller (which then runs again with more
    memory)."""
    folder = _torch_export(tmp_path)
    trace = next(folder.rglob("trace_view.json"))
    monkeypatch.setattr(timeline_tail, "CUT_MIN_BYTES", trace.stat().st_size // 2)
    monkeypatch.setattr(timeline_tail, "TAIL_MIN_BYTES", 1000)
    planned = []
    monkeypatch.setattr(loader, "plan_tail", lambda *a: planned.append(timeline_tail.plan_tail(*a)) or planned[-1])

    def out_of_memory(con, paths, ctx):
        raise duckdb.OutOfMemoryException("Out of Memory Error: test")

    monkeypatch.setattr(op_summary, "load_op_summary", out_of_memory)
    outcome = []

    def load():
        try:
            load_export(folder)
        except duckdb.OutOfMemoryException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "the loader hung: its side thread waits for a tail never parsed"
    assert len(outcome) == 1 and planned and planned[0] is not None


def test_the_tail_table_matches_the_raw_table(tmp_path):
    con = connect()
    name = timeline_tail._new_tail_table(con)
    raw = create_raw_table(con)
    columns = "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index"
    assert con.execute(columns, [name.rsplit(".", 1)[1]]).fetchall() == con.execute(columns, [raw]).fetchall()
    assert timeline_json.raw_table_columns().startswith("file_no INTEGER")


@pytest.mark.parametrize("damage", ["truncated", "bad_event_in_tail"])
def test_a_damaged_trace_gives_the_same_problems_and_tables_cut_or_not(tmp_path, monkeypatch, damage):
    """A truncated trace (its tail piece does not parse) or one malformed event near its end: the
    cut read gives up and the whole-file read reports and salvages exactly as without a cut."""
    folder = _torch_export(tmp_path)
    trace = next(folder.rglob("trace_view.json"))
    text = trace.read_text(encoding="utf-8")
    if damage == "truncated":
        text = text[: len(text) * 9 // 10]
    else:
        at = text.rindex("}, {") + 1
        text = text[:at] + ', {"ph": "X", "name": "bad" "pid": 7}' + text[at:]
    trace.write_text(text, encoding="utf-8")
    whole = _tables(folder)
    monkeypatch.setattr(timeline_tail, "CUT_MIN_BYTES", len(text) // 2)
    monkeypatch.setattr(timeline_tail, "TAIL_MIN_BYTES", 1000)
    cuts = []
    real_read_into = timeline_tail.TailHandoff.read_into
    monkeypatch.setattr(
        timeline_tail.TailHandoff,
        "read_into",
        lambda self, con, raw: cuts.append(real_read_into(self, con, raw)) or cuts[-1],
    )
    assert _tables(folder) == whole
    assert cuts == [False] and whole["problems"]
