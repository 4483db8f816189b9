"""An export's timeline read beside its other files: on a connection of its own to the same database, on a thread.

DuckDB parses one JSON file on one thread, and a timeline is one or two big files: reading it is the longest
part of reading an export that has one, and a core waits meanwhile. Beside it, the connection reads the export's
other kinds, whose scans take that core. The timeline reader fills ``timeline`` and ``counters``, which none of
those kinds touch (``_BESIDE_ANY``), so every table gets its rows in the order of a read of one kind after
another; its problems go to its own part context as before, which the loader absorbs in READERS order. Kinds
read first (msprof's task_time, whose device tasks supersede the timeline's) are read before it starts. On one
DuckDB thread (the user's count, a small export's, a batch worker's share of the cores) or under a memory limit
too small for two readings at once, the timeline is read in its turn (``read_beside``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from analyzer.execution.memory import parse_size
from analyzer.execution.threads import SMALL_INPUT_BYTES
from analyzer.ingest.readers import DEVICE_TASK_KINDS, READERS

TIMELINE = "timeline"
# The kinds whose readers fill neither of the timeline's tables: all but the other readers of device tasks and the
# profiler databases, which fill the timeline (and counters) too; those keep the timeline in its turn.
_BESIDE_ANY = frozenset(READERS) - DEVICE_TASK_KINDS - {"torch_db", "msprof_db", "analysis_db"}
# How many times the bytes of the files read at once DuckDB's memory limit must be for a timeline read beside.
ROOM = 4


@dataclass(frozen=True)
class Budget:
    """What the connection may use: DuckDB's memory limit and thread count."""

    limit_bytes: int
    threads: int


def budget(con: duckdb.DuckDBPyConnection) -> Budget:
    """DuckDB's memory limit (bytes) and thread count on ``con``."""
    ((limit, threads),) = con.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchall()
    return Budget(parse_size(limit, "DuckDB's memory_limit"), int(threads))


def read_beside(kinds: list[str], files: dict[str, tuple[Path, ...]], allowed: Callable[[], Budget]) -> bool:
    """Whether the timeline of ``kinds`` (the kinds left to read, in their order) is read beside the others:
    there is one, at least one other kind to read beside it, each of them one that may be, enough of it
    (SMALL_INPUT_BYTES) that a second core pays, and the ``allowed`` budget (asked only then) has room for both
    readings at once:
    more than one thread (one is the user's count, a small export's or a batch worker's share of the cores) and
    a memory limit of ROOM times the files' bytes (a JSON parse and a CSV scan hold buffers DuckDB does not
    spill, so two at once can fail under a limit one after another fits)."""
    others = [kind for kind in kinds if kind != TIMELINE]
    if TIMELINE not in kinds or not others or not set(others) <= _BESIDE_ANY:
        return False
    timeline = sum(_size(path) for path in files[TIMELINE])
    if timeline < SMALL_INPUT_BYTES:
        return False
    total = timeline + sum(_size(path) for kind in others for path in files[kind])
    room = allowed()
    return room.threads > 1 and total * ROOM <= room.limit_bytes


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # the reader names the file's problem
        return 0


@contextmanager
def timeline_beside(
    con: duckdb.DuckDBPyConnection, read: Callable[[duckdb.DuckDBPyConnection], None]
) -> Iterator[None]:
    """Within the block, ``read`` (the timeline's reader) runs on a thread with a connection of its own to
    ``con``'s database; leaving the block waits for it, and raises what it raised. A block that fails or is
    stopped interrupts it first."""
    side = con.cursor()
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="npu-triage-timeline") as pool:
            reading = pool.submit(read, side)
            try:
                yield
            except BaseException:
                side.interrupt()  # the export's reading failed or was stopped: its timeline is not wanted
                raise
            reading.result()
    finally:
        side.close()
