"""A lone large timeline array read in pieces on all threads gives the rows of a whole-file read."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from analyzer.ingest import load_export, loader, timeline_split
from analyzer.ingest.database import connect
from analyzer.ingest.timeline_json import create_raw_table, read_raw_events
from analyzer.ingest.timeline_split import read_split_array, splits_in_parallel
from tests.read_context import context_for
from tests.trace_events import string_across_the_middle, trace_events
from tests.tree_hash import tree_digest

PIECE_BYTES = 2000  # test sizes: files of a few KiB are cut in up to 4 pieces
SEPARATOR = re.compile(rb"\}\s*,\s*\{")  # what the splitter cuts at


@pytest.fixture
def small_pieces(monkeypatch):
    """Split files from 4 KB on, into pieces of at least 2 KB (instead of 32 MiB / 16 MiB)."""
    monkeypatch.setattr(timeline_split, "SPLIT_MIN_BYTES", 2 * PIECE_BYTES)
    monkeypatch.setattr(timeline_split, "PIECE_MIN_BYTES", PIECE_BYTES)


def _rows(con, raw: str) -> list[tuple]:
    return con.execute(f"SELECT * FROM {raw} ORDER BY rowid").fetchall()


def _read_both(path: Path, threads: int = 4):
    """Whether the split read took the file, then (rows, context) of the split read (or of its
    fallback) and of the whole-file read."""
    con = connect()
    con.execute(f"SET threads = {threads}")
    split_ctx, whole_ctx = context_for(path.parent), context_for(path.parent)
    split_raw, whole_raw = create_raw_table(con), create_raw_table(con)
    did_split = read_split_array(con, split_raw, (path,), split_ctx)
    if not did_split:
        assert _rows(con, split_raw) == []  # a failed split inserts nothing
        read_raw_events(con, split_raw, path, 0, split_ctx)
    read_raw_events(con, whole_raw, path, 0, whole_ctx)
    return did_split, (_rows(con, split_raw), split_ctx), (_rows(con, whole_raw), whole_ctx)


@pytest.mark.parametrize("dump", [{}, {"separators": (",", ":")}, {"indent": 1}], ids=["spaced", "compact", "indented"])
def test_split_read_gives_the_same_raw_rows_in_file_order(small_pieces, tmp_path, dump):
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(trace_events(60), ensure_ascii=False, **dump), encoding="utf-8")
    did_split, (split_rows, split_ctx), (whole_rows, _) = _read_both(path)
    assert did_split
    assert split_rows == whole_rows and len(whole_rows) == 4 + 4 * 60
    assert {r[1] for r in split_rows} == {
        "M",
        "X",
        "C",
        "s",
    }  # metadata and counters kept, with args
    assert split_ctx.files_read == ["trace_view.json"] and not split_ctx.problems


@pytest.mark.parametrize("filler", ["}, {", '}, {"ph": "X"}, {', "}   ,  {"])
def test_split_separator_inside_a_string_at_the_cut_gives_the_same_rows(small_pieces, tmp_path, filler):
    path = string_across_the_middle(tmp_path, filler)
    did_split, (split_rows, split_ctx), (whole_rows, whole_ctx) = _read_both(path, threads=2)
    assert not did_split  # the piece before the cut ends inside the string: the strict read refused it
    assert split_rows == whole_rows and any(filler in str(r[2]) for r in whole_rows)
    assert split_ctx.problems == whole_ctx.problems == []


def _problems_and_tables(folder: Path) -> tuple[list[str], list, list]:
    """What load_export makes of the folder on 2 threads (a split needs at least 2)."""
    con = connect()
    con.execute("SET threads = 2")
    ing = load_export(folder, con=con)
    timeline = ing.con.execute("SELECT * FROM timeline ORDER BY ALL").fetchall()
    counters = ing.con.execute("SELECT * FROM counters ORDER BY ALL").fetchall()
    return [p.line() for p in ing.problems], timeline, counters


def _export_with(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "trace_view.json").write_text(text, encoding="utf-8")
    return folder


def test_split_truncated_file_is_salvaged_as_before(tmp_path, monkeypatch):
    text = json.dumps(trace_events(60))
    folder = _export_with(tmp_path, text[: text.rindex('"HostToDevice') + 7])
    before = _problems_and_tables(folder)
    monkeypatch.setattr(timeline_split, "SPLIT_MIN_BYTES", 2 * PIECE_BYTES)
    monkeypatch.setattr(timeline_split, "PIECE_MIN_BYTES", PIECE_BYTES)
    assert splits_in_parallel(folder / "trace_view.json", 2)
    assert _problems_and_tables(folder) == before
    assert any("truncated JSON" in line for line in before[0]) and before[1]


BAD_EVENTS = {
    "syntax": '{"ph": "X", "name": "bad" "pid": 7}',  # missing comma: the whole file is unreadable
    "ts_not_a_number": '{"ph": "X", "name": "bad", "pid": 7, "tid": 1, "ts": "soon", "dur": 1}',
    "not_an_object": "42",
}


@pytest.mark.parametrize("bad", BAD_EVENTS.values(), ids=BAD_EVENTS.keys())
def test_split_file_with_one_malformed_event_gives_the_same_problems(tmp_path, monkeypatch, bad):
    events = [json.dumps(e) for e in trace_events(60)]
    events.insert(len(events) * 3 // 4, bad)
    folder = _export_with(tmp_path, "[" + ", ".join(events) + "]")
    before = _problems_and_tables(folder)
    monkeypatch.setattr(timeline_split, "SPLIT_MIN_BYTES", 2 * PIECE_BYTES)
    monkeypatch.setattr(timeline_split, "PIECE_MIN_BYTES", PIECE_BYTES)
    assert splits_in_parallel(folder / "trace_view.json", 2)
    assert _problems_and_tables(folder) == before
    assert any("trace_view.json" in line for line in before[0])


def test_split_writes_nothing_beside_the_export_and_cleans_its_pieces(small_pieces, tmp_path, monkeypatch):
    folder = _export_with(tmp_path, json.dumps(trace_events(60)))
    private = tmp_path / "private_tmp"
    private.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(private))
    listing, digest = sorted(p.name for p in folder.iterdir()), tree_digest(folder)
    con = connect()
    con.execute("SET threads = 2")
    assert read_split_array(con, create_raw_table(con), (folder / "trace_view.json",), context_for(folder))
    load_export(folder)
    assert sorted(p.name for p in folder.iterdir()) == listing and tree_digest(folder) == digest
    assert not [p for p in private.iterdir() if p.name.startswith("npu_triage_")]  # pieces removed


def test_split_is_decided_by_size_threads_and_array_form(small_pieces, tmp_path):
    array, obj = tmp_path / "a.json", tmp_path / "o.json"
    array.write_text(json.dumps(trace_events(60)), encoding="utf-8")
    obj.write_text(json.dumps({"traceEvents": trace_events(60)}), encoding="utf-8")
    assert splits_in_parallel(array, 2) and not splits_in_parallel(array, 1)
    assert not splits_in_parallel(obj, 2) and not splits_in_parallel(tmp_path / "missing.json", 2)
    small = tmp_path / "s.json"
    small.write_text(json.dumps(trace_events(1)), encoding="utf-8")
    assert not splits_in_parallel(small, 2)


def test_split_needs_a_memory_limit_of_twice_the_file(small_pieces, tmp_path):
    """Under less memory DuckDB would run the pieces one after the other anyway (see the module)."""
    path = tmp_path / "a.json"
    path.write_text(json.dumps(trace_events(60)), encoding="utf-8")
    size = path.stat().st_size
    assert splits_in_parallel(path, 2, None) and splits_in_parallel(path, 2, 2 * size)
    assert not splits_in_parallel(path, 2, 2 * size - 1)


def test_a_connection_whose_limit_is_short_of_the_file_reads_it_whole_on_one_thread(
    small_pieces, tmp_path, monkeypatch
):
    """The connection's own limit decides: ask for more memory per file byte than DuckDB's default
    gives, and the split read declines (inserting nothing) and the loader keeps the parse to one
    thread beside the CSV readers."""
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(trace_events(60)), encoding="utf-8")
    con = connect()
    con.execute("SET threads = 2")
    raw = create_raw_table(con)
    assert read_split_array(con, raw, (path,), context_for(path.parent))
    monkeypatch.setattr(timeline_split, "LIMIT_PER_FILE_BYTE", 1 << 40)
    again = create_raw_table(con)
    assert not read_split_array(con, again, (path,), context_for(path.parent))
    assert _rows(con, again) == []
    assert not loader._parsed_in_pieces(con, [path])
    with loader._one_thread_per_query(con, serial=True):
        assert con.execute("SELECT current_setting('threads')").fetchone()[0] == 1


@pytest.mark.parametrize(("events", "inside"), [(60, 2), (1, 1)], ids=["split_file", "small_file"])
def test_loader_forces_one_thread_only_beside_a_parse_that_is_not_split(small_pieces, tmp_path, events, inside):
    """A file parsed in pieces keeps every thread; a small one is parsed on one thread (beside
    the CSV readers)."""
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(trace_events(events)), encoding="utf-8")
    con = connect()
    con.execute("SET threads = 2")
    with loader._one_thread_per_query(con, serial=not loader._parsed_in_pieces(con, [path])):
        assert con.execute("SELECT current_setting('threads')").fetchone()[0] == inside
    assert con.execute("SELECT current_setting('threads')").fetchone()[0] == 2
