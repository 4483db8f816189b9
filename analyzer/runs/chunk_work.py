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
from analyzer.ingest.loader import usable_run_ids
from analyzer.ingest.metadata.discover import Scanned, scan
from analyzer.logs.beside import found_logs
from analyzer.runs.work import (
    Judged,
    RunTables,
    RunTask,
    WorkSettings,
    analyze_run,
    catalog_run_id,
    catalog_tables,
    judge,
    unread_kinds,
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
    """Read the exports of one pass together (``load_export`` of all their sources: one scan per kind of
    file), judge and split them; any failure of the pass as a whole sends each of its exports alone, and an
    export that gave nothing usable, or whose rows fail, goes alone (its failure is the one it gets alone)."""
    if not members:
        return {}
    con = connect()
    try:
        read = _read_all(con, members, settings)
        judged = judge(con, [run for r in read for run in r.runs], settings)
        return {r.index: _tables(r, judged, settings) for r in read}
    except Exception:
        if stop_requested():
            raise
        return {i: analyze_run(task, settings) for i, task, _ in members}
    finally:
        con.close()


def _alias(source_id: str, taken: set[str]) -> str:
    """The export's id in the pass's connection: its own, or, when an export before it holds that name
    (exports alone are named after their folder), the name with '#N', which no folder name gives."""
    alias, n = source_id, 0
    while alias in taken:
        n += 1
        alias = f"{source_id}#{n}"
    taken.add(alias)
    return alias


def _read_all(con, members: list[tuple[int, RunTask, Scanned]], settings: WorkSettings) -> list[_Read]:
    """Every export of the pass read into ``con`` in one ``load_export``, each under its alias, with the
    catalog ids of its usable runs."""
    taken: set[str] = set()
    sources = [scanned[0][0] for _, _, scanned in members]
    aliased = [replace(s, source_id=_alias(s.source_id, taken)) for s in sources]
    ingested = load_export(Path(members[0][1].export_path), con, sources=aliased, left_out_kinds=unread_kinds(settings))
    usable = set(usable_run_ids(con, ingested.run_ids))
    read = []
    for (index, task, _), own, source in zip(members, sources, aliased, strict=True):
        alias = source.source_id
        # its own runs only: the alias, or the alias and a device (as loader._runs_of finds them)
        mine = [r for r in ingested.run_ids if r == alias or r.startswith(alias + "/dev")]
        own_id = own.source_id
        runs = [(rid, catalog_run_id(own_id + rid[len(alias) :], own_id, task.fingerprint)) for rid in mine]
        read.append(_Read(index, task, alias, [run for run in runs if run[0] in usable]))
    return read


def _tables(read: _Read, judged: Judged, settings: WorkSettings) -> RunTables:
    if not read.runs:  # alone, for the message it gives alone (what its reading reported)
        return analyze_run(read.task, settings)
    try:
        return catalog_tables(read.task, read.alias, read.runs, judged, [])
    except Exception:
        if stop_requested():
            raise
        return analyze_run(read.task, settings)
