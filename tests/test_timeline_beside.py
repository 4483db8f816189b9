"""An export's timeline is read on a thread beside its other files (ingest/timeline_beside.py): the same
tables, rows in the same order, and the same messages as a read of one kind after another."""

from __future__ import annotations

import threading
from pathlib import Path

import duckdb
import pytest

from analyzer.execution.threads import SMALL_INPUT_BYTES
from analyzer.ingest import loader
from analyzer.ingest.database import connect
from analyzer.ingest.loader import load_export
from analyzer.ingest.schema import TABLES
from analyzer.ingest.timeline import timeline
from analyzer.ingest.timeline_beside import ROOM, Budget, budget, read_beside, timeline_beside
from fixtures.generator import LAYOUTS, write_export

# Enough tasks for a timeline past SMALL_INPUT_BYTES in either layout (about 1.3-1.6 KB of JSON a task).
_TASKS = 4_000


def _damaged(root: Path) -> None:
    """One event without a time stamp in the timeline, one task without a duration in the per-task CSV."""
    [trace] = [p for p in sorted(root.rglob("*.json")) if p.name == "trace_view.json" or "msprof_" in p.name][:1]
    text = trace.read_text(encoding="utf-8")
    trace.write_text(text.replace('"ts"', '"tz"', 1), encoding="utf-8")
    [tasks] = [p for p in sorted(root.rglob("*.csv")) if p.name.startswith(("kernel_details", "op_summary"))][:1]
    lines = tasks.read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].rstrip("\r\n").split(",")
    column = next(i for i, name in enumerate(header) if name in ("Duration(us)", "Task Duration(us)"))
    cells = lines[5].split(",")
    cells[column] = "N/A"
    lines[5] = ",".join(cells)
    tasks.write_text("".join(lines), encoding="utf-8")


def _read(root: Path) -> tuple[dict[str, list[tuple]], list[str]]:
    ingested = load_export(root, connect(threads=2))  # the tests' processes run DuckDB on one thread
    # every row of every table in the order it was inserted
    tables = {name: ingested.con.execute(f"SELECT * FROM {name}").fetchall() for name in TABLES}
    return tables, [p.line() for p in ingested.problems]


@pytest.mark.slow
@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_timeline_read_beside_gives_what_a_read_in_turn_gives(layout: str, tmp_path: Path, monkeypatch):
    [root] = write_export("large_host_gaps", tmp_path / "run", layout=layout, seed=23, tasks=_TASKS)
    _damaged(root)
    threads: list[str] = []
    usual = timeline.load_timeline

    def recorded(con, paths, ctx):
        threads.append(threading.current_thread().name)
        return usual(con, paths, ctx)

    monkeypatch.setattr(timeline, "load_timeline", recorded)
    beside, beside_problems = _read(root)
    assert threads and threads[0].startswith("npu-triage-timeline")
    monkeypatch.setattr(loader, "read_beside", lambda kinds, files, allowed: False)
    in_turn, in_turn_problems = _read(root)
    assert threads[1] == threading.current_thread().name
    assert beside["timeline"] and beside["ops"] and beside["counters"]
    assert beside == in_turn
    assert beside_problems == in_turn_problems
    assert [p.split(": ")[2][:40] for p in beside_problems] == [
        "1 rows have no usable start time or dura",  # the CSV's, then the timeline's (READERS order)
        "1 events have no usable 'ts' (missing, o",
    ]


def _file(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def _given(allowed: Budget):
    """The budget as the loader hands it over: asked for only when the files leave the question open."""
    return lambda: allowed


def test_a_timeline_is_read_beside_only_big_beside_kinds_of_tables_of_their_own_and_with_room(tmp_path: Path):
    big, small = (
        _file(tmp_path / "big.json", SMALL_INPUT_BYTES),
        _file(tmp_path / "small.json", SMALL_INPUT_BYTES - 1),
    )
    csv = _file(tmp_path / "op.csv", SMALL_INPUT_BYTES)
    files, room = {"timeline": (big,), "op_summary": (csv,)}, Budget(2 * SMALL_INPUT_BYTES * ROOM, 2)
    kinds = ["op_summary", "timeline"]
    assert read_beside(kinds, files, _given(room))
    # both readings at once might not fit
    assert not read_beside(kinds, files, _given(Budget(room.limit_bytes - 1, 2)))
    # one thread: one core
    assert not read_beside(kinds, files, _given(Budget(room.limit_bytes, 1)))
    # a core does not pay
    assert not read_beside(kinds, {**files, "timeline": (small,)}, _given(room))
    assert not read_beside(["timeline"], files, _given(room))  # nothing to read beside it
    assert not read_beside(["op_summary"], files, _given(room))  # no timeline
    # a profiler database fills the timeline too: its rows must come in their turn
    assert not read_beside([*kinds, "torch_db"], {**files, "torch_db": (big,)}, _given(Budget(1 << 40, 2)))
    assert not read_beside(kinds, {**files, "timeline": (tmp_path / "absent.json",)}, _given(room))


def test_the_budget_is_read_off_the_connection():
    assert budget(connect(limit_bytes=512 << 20, threads=3)) == Budget(512 << 20, 3)


@pytest.mark.slow
def test_on_one_thread_the_timeline_is_read_in_its_turn(tmp_path: Path, monkeypatch):
    [root] = write_export("large_host_gaps", tmp_path / "run", layout="msprof", seed=29, tasks=_TASKS)
    asked: list[bool] = []
    usual = loader.read_beside
    monkeypatch.setattr(loader, "read_beside", lambda *args: asked.append(usual(*args)) or asked[-1])
    load_export(root, connect(threads=1))
    load_export(root, connect(threads=2))
    assert asked == [False, True]


@pytest.mark.slow
def test_under_a_tight_memory_limit_the_timeline_is_read_in_its_turn_and_every_file_is_read(
    tmp_path: Path, monkeypatch
):
    # files of about 40 MB: under the smallest limit, two readings at once run out of memory where one fits
    [root] = write_export("large_host_gaps", tmp_path / "run", layout="msprof", seed=23, tasks=4 * _TASKS)
    asked: list[bool] = []
    usual = loader.read_beside
    monkeypatch.setattr(loader, "read_beside", lambda *args: asked.append(usual(*args)) or asked[-1])
    tight = load_export(root, connect(limit_bytes=64 << 20, threads=2))
    assert tight.problems == []
    assert tight.con.execute("SELECT count(*) = count(op_type) FROM ops").fetchall() == [(True,)]
    load_export(root, connect(limit_bytes=1 << 30, threads=2))
    assert asked == [False, True]


def test_a_reading_that_fails_beside_the_timeline_stops_it_and_is_raised():
    con = connect()
    started, ended = threading.Event(), []

    def read(side: duckdb.DuckDBPyConnection) -> None:
        started.set()
        try:
            side.execute("SELECT count(*) FROM range(1000000000000) a, range(10) b").fetchall()
        except duckdb.InterruptException as exc:
            ended.append(exc)
            raise

    with pytest.raises(RuntimeError, match="a reader failed"), timeline_beside(con, read):
        assert started.wait(10)
        threading.Event().wait(0.2)  # the side's query is running
        raise RuntimeError("a reader failed")
    assert ended  # interrupted, not run to its end
    assert con.execute("SELECT 1").fetchall() == [(1,)]  # the connection goes on


def test_what_the_timeline_reading_raises_is_raised_after_the_block():
    con = connect()
    done = []

    def read(side: duckdb.DuckDBPyConnection) -> None:
        raise MemoryError("the timeline's reading ran out of memory")

    with pytest.raises(MemoryError), timeline_beside(con, read):
        done.append(con.execute("SELECT 42").fetchall())
    assert done == [[(42,)]]  # the block ran to its end first
