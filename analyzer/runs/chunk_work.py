"""A batch worker's chunk of runs: read into one connection, judged in one pass, split back into each run's rows.

Each run's tables are the ones ``work.analyze_run`` gives it alone (the same run ids, findings,
problems, failures). An export that the one pass cannot take as it is (no export found, logs
beside it) is analysed alone, and so is every export of a pass that fails as a whole: one export
never spoils the others of its chunk.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from analyzer.ingest import load_export
from analyzer.ingest.database import connect
from analyzer.ingest.loader import Ingested, usable_run_ids
from analyzer.ingest.metadata.discover import Scanned, scan
from analyzer.logs.beside import found_logs
from analyzer.runs.work import (
    RunTables,
    RunTask,
    WorkSettings,
    analyze_run,
    catalog_run_id,
    catalog_tables,
    judge,
    unusable_table,
)
from analyzer.stop_signal import stop_requested


@dataclass(frozen=True)
class RunChunk:
    """Runs that one worker analyses in one pass (``chunks.py`` plans them)."""

    tasks: tuple[RunTask, ...]


@dataclass(frozen=True)
class _Read:
    """One export of a pass, read into the pass's connection, with its catalog run ids."""

    index: int  # its place in the chunk
    task: RunTask
    ingested: Ingested
    alias: str  # its source id in the connection
    runs: list[tuple[str, str]]  # (ingest run id in the connection, catalog run id) of its usable runs


def analyze_chunk(chunk: RunChunk, settings: WorkSettings) -> list[RunTables]:
    """Every run's catalog rows (or failures row), in ``chunk.tasks`` order; never raises but on a stop."""
    if len(chunk.tasks) == 1:
        return [analyze_run(chunk.tasks[0], settings)]
    results: dict[int, RunTables] = {}
    members = []
    for i, task in enumerate(chunk.tasks):
        scanned = _scanned_for_pass(task, settings)
        if scanned is None:
            results[i] = analyze_run(task, settings)
        else:
            members.append((i, task, scanned))
    results.update(_one_pass(members, settings))
    return [results[i] for i in range(len(chunk.tasks))]


def _scanned_for_pass(task: RunTask, settings: WorkSettings) -> Scanned | None:
    """The export's own scan (as ``load_export`` makes it alone), or None when it goes alone: not one export
    found there (its failure is the one it gets alone), or logs beside it (read into its connection)."""
    try:
        sources, unreadable = scan(Path(task.export_path))
        if len(sources) != 1 or (settings.diagnose and found_logs([Path(task.export_path)])):
            return None
    except Exception:
        if stop_requested():
            raise
        return None
    return sources, unreadable


def _one_pass(members: list[tuple[int, RunTask, Scanned]], settings: WorkSettings) -> dict[int, RunTables]:
    """Read, judge and split the exports of one pass; any failure of the pass as a whole sends each of its
    exports alone, and a failure of one export's rows sends that one alone."""
    if not members:
        return {}
    con = connect()
    try:
        taken: set[str] = set()
        read = [_read(con, i, task, scanned, taken) for i, task, scanned in members]
        judged = judge(con, [run for r in read for run in r.runs], settings)
        return {r.index: _tables(con, r, judged, settings) for r in read}
    except Exception:
        if stop_requested():
            raise
        return {i: analyze_run(task, settings) for i, task, _ in members}
    finally:
        con.close()


def _alias(source_id: str, taken: set[str]) -> str:
    """The export's id in the pass's connection: its own, or, when an export read before holds that name
    (exports alone are named after their folder), the name with '#N', which no folder name gives."""
    alias, n = source_id, 0
    while alias in taken:
        n += 1
        alias = f"{source_id}#{n}"
    taken.add(alias)
    return alias


def _read(con, index: int, task: RunTask, scanned: Scanned, taken: set[str]) -> _Read:
    sources, unreadable = scanned
    own_id = sources[0].source_id
    alias = _alias(own_id, taken)
    source = replace(sources[0], source_id=alias)
    ingested = load_export(Path(task.export_path), con, sources=[source], unreadable=unreadable)
    # its own runs only: the loader finds them by the alias as a prefix (loader._runs_of), never another's
    mine = ingested.run_ids
    runs = [(rid, catalog_run_id(own_id + rid[len(alias) :], own_id, task.fingerprint)) for rid in mine]
    usable = set(usable_run_ids(con, mine))
    return _Read(index, task, ingested, alias, [run for run in runs if run[0] in usable])


def _tables(con, read: _Read, judged, settings: WorkSettings) -> RunTables:
    if not read.runs:
        return unusable_table(read.task, read.ingested)
    try:
        return catalog_tables(con, read.task, read.alias, read.runs, judged, [], settings)
    except Exception:
        if stop_requested():
            raise
        return analyze_run(read.task, settings)
