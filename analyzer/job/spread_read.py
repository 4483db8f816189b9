"""A tree's per-run reading spread over an executor: chunks of exports, each read by a worker, in the parent's tables.

Each worker reads its chunk with the loader as it is (``load_export`` of the chunk's exports, with the
messages it gives each file) into a connection of its own, and hands back the chunk's run ids, problems
and normalized tables as Arrow (they travel to the parent whatever the cluster, no shared folder needed).
The parent inserts the chunks in the exports' order, so that each run's rows are stored as one
``load_export`` of every export stores them (only the runs' order may differ: an export read alone, a
damaged one, follows the exports read together in its chunk, not in the whole tree), and what follows
(job tables, rules, reports) gives the same bytes. A chunk whose worker is lost is read by the parent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from analyzer.errors import first_line
from analyzer.ingest.database import connect
from analyzer.ingest.loader import Ingested, load_export, reading_started
from analyzer.ingest.metadata.discover import Unreadable
from analyzer.ingest.model import ExportSource, Problem
from analyzer.ingest.schema import TABLES
from analyzer.stop_signal import stop_requested

if TYPE_CHECKING:  # the executors load with the option that asks for one, not with every command
    from analyzer.runs.executor import Executor

CHUNKS_PER_SLOT = 2  # the parent inserts a worker's first chunk while the worker reads its second
MAX_EXPORTS = 256  # a chunk's tables are held twice at once (worker and parent) until inserted


@dataclass(frozen=True)
class ReadChunk:
    """Exports that one worker reads in one ``load_export``; ``index``: the chunk's place in the tree's order."""

    index: int
    root: str
    sources: tuple[ExportSource, ...]
    left_out_kinds: frozenset[str]


@dataclass
class ChunkTables:
    """What a worker read: the chunk's run ids and problems (as ``load_export`` gives them), its tables' rows."""

    run_ids: list[str]
    problems: list[Problem]
    tables: dict[str, Any]  # table name -> pyarrow.Table, the tables holding rows only


def plan_read_chunks(
    root: Path, sources: list[ExportSource], slots: int, left_out_kinds: frozenset[str]
) -> list[ReadChunk]:
    """``sources`` in their order, cut into about CHUNKS_PER_SLOT chunks per slot of at most MAX_EXPORTS each."""
    per_chunk = max(1, min(MAX_EXPORTS, math.ceil(len(sources) / (max(1, slots) * CHUNKS_PER_SLOT))))
    return [
        ReadChunk(i, str(root), tuple(sources[start : start + per_chunk]), left_out_kinds)
        for i, start in enumerate(range(0, len(sources), per_chunk))
    ]


def read_chunk(chunk: ReadChunk) -> ChunkTables:
    """A worker's part: the chunk's exports read into a connection of its own, its tables as Arrow."""
    con = connect()
    try:
        ingested = load_export(Path(chunk.root), con, sources=list(chunk.sources), left_out_kinds=chunk.left_out_kinds)
        tables = {name: con.sql(f"SELECT * FROM {name}").to_arrow_table() for name in TABLES}
        return ChunkTables(ingested.run_ids, ingested.problems, {n: t for n, t in tables.items() if t.num_rows})
    finally:
        con.close()


def insert_chunk(con: duckdb.DuckDBPyConnection, got: ChunkTables) -> None:
    """The chunk's rows appended to the parent's tables, in the order the worker's tables held them."""
    for name, rows in got.tables.items():
        con.register("_spread_chunk", rows)
        try:
            con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _spread_chunk")
        finally:
            con.unregister("_spread_chunk")


def spread_reader(executor: Executor) -> Callable[..., Ingested]:
    """A reader of a tree's exports with ``load_export``'s keywords (path, con, sources, unreadable,
    left_out_kinds, progress) that spreads them over ``executor``; a lost chunk is said to the executor's
    ``note`` when it has one (the CLI's executors: on stderr)."""

    def read(path: Path, **kwargs: Any) -> Ingested:
        return read_spread(path, executor=executor, note=getattr(executor, "note", None), **kwargs)

    return read


def read_spread(
    path: Path,
    *,
    con: duckdb.DuckDBPyConnection,
    executor: Executor,
    sources: list[ExportSource],
    unreadable: Sequence[Unreadable] = (),
    left_out_kinds: frozenset[str] = frozenset(),
    progress: Callable[[ExportSource], None] | None = None,
    note: Callable[[str], None] | None = None,
) -> Ingested:
    """``load_export(path, con, sources=sources, ...)``, its exports read by ``executor``'s workers: the same
    run ids, problems (in the same order) and table rows. Fewer than two exports are read in this process.
    ``note``: told of each chunk read here because its worker lost it (a worker that does not see the files)."""
    if len(sources) < 2:
        return load_export(path, con, progress, left_out_kinds, sources, unreadable)
    result = reading_started(con, sources, unreadable)
    chunks = plan_read_chunks(path, sources, executor.slots, left_out_kinds)
    waiting: dict[int, ChunkTables | BaseException] = {}
    taken = 0
    for chunk, got in executor.completed(read_chunk, chunks):
        waiting[chunk.index] = got
        while taken in waiting:  # in the tree's order, whichever finished first
            _take(result, chunks[taken], waiting.pop(taken), progress, note)
            taken += 1
    return result


def _take(
    result: Ingested,
    chunk: ReadChunk,
    got: ChunkTables | BaseException,
    progress: Callable | None,
    note: Callable | None,
) -> None:
    """One chunk into the parent: its worker's tables, or, when its worker was lost, the chunk read here."""
    if isinstance(got, BaseException):
        if stop_requested():
            raise got
        if note:
            names = f"{chunk.sources[0].source_id} .. {chunk.sources[-1].source_id}"
            why = f"{type(got).__name__}: {first_line(got)}"
            note(f"the worker reading {len(chunk.sources)} export(s) ({names}) failed ({why}); they are read here")
        got = read_chunk(chunk)
    insert_chunk(result.con, got)
    result.run_ids.extend(got.run_ids)
    result.problems.extend(got.problems)
    for source in chunk.sources:
        if progress:
            progress(source)
