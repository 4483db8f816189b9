"""Many runs' timeline JSON files (one array file each) read in one read_json scan, the file's position
naming its run, and turned into timeline and counters rows by one statement each (timeline_events,
timeline_counters); a file the per-file reader (timeline.load_timeline) would say anything on goes to
the careful path."""

from __future__ import annotations

import duckdb

from analyzer.ingest.csv.csv_group import RunFile
from analyzer.ingest.sql_values import IN_RUNS, UNNAMED_PROCESS
from analyzer.ingest.timeline.timeline_counters import insert_counters_of_files
from analyzer.ingest.timeline.timeline_events import insert_timelines
from analyzer.ingest.timeline.timeline_json import create_raw_table, first_char, insert_arrays


def probe_timelines(files: list[RunFile]) -> list[bool]:
    """Whether each file is a top-level JSON array (the other form, an object, is read file by file);
    Python work only, no connection."""
    found = []
    for f in files:
        try:
            found.append(first_char(f.path) == "[")
        except OSError:
            found.append(False)
    return found


def read_timelines(con: duckdb.DuckDBPyConnection, files: list[RunFile], arrays: list[bool]) -> set[str]:
    """Insert the timeline and counters rows of every file that reads without a word to say (``arrays``:
    ``probe_timelines(files)``); return the runs whose file needs the careful path (their rows, if any
    went in, are the caller's to remove)."""
    careful = {f.run_id for f, ok in zip(files, arrays, strict=True) if not ok}
    chosen = [f for f, ok in zip(files, arrays, strict=True) if ok]
    if not chosen:
        return careful
    raw = create_raw_table(con)
    try:
        careful |= _insert_raw(con, raw, chosen)
        careful |= _unclean_files(con, raw, chosen)
        runs = [f.run_id for f in chosen]
        left_out = chosen[0].ctx.left_out_kinds  # one load's, the same for every export
        insert_timelines(con, raw, runs, left_out)
        insert_counters_of_files(con, raw, runs)
    finally:
        con.execute(f"DROP TABLE IF EXISTS {raw}")
    careful |= _unnamed_processes(con, runs)
    for f in chosen:
        if f.run_id not in careful:
            f.ctx.mark_read(f.path)
    return careful


def _insert_raw(con: duckdb.DuckDBPyConnection, raw: str, files: list[RunFile]) -> set[str]:
    """Every file's events in one read_json call, file ``file_no`` being ``files[file_no]``; when that fails
    (a file that does not parse, which fails the whole call), each file alone, the failing ones careful."""
    left_out = files[0].ctx.left_out_kinds
    try:
        insert_arrays(con, raw, [f.path for f in files], left_out=left_out)
        return set()
    except duckdb.Error:
        con.execute(f"DELETE FROM {raw}")
    careful = set()
    for n, f in enumerate(files):
        try:
            insert_arrays(con, raw, [f.path], n, left_out=left_out)
        except duckdb.Error:
            careful.add(f.run_id)
    return careful


def _unclean_files(con: duckdb.DuckDBPyConnection, raw: str, files: list[RunFile]) -> set[str]:
    """The runs whose file holds an event with a problem (timeline._report_unusable_events names them) or no
    event at all; their raw rows are deleted."""
    rows = con.execute(
        f"SELECT file_no, bool_or(problems <> 0) FROM {raw} GROUP BY file_no ORDER BY file_no"
    ).fetchall()
    clean = {file_no for file_no, problem in rows if not problem}
    unclean = [n for n in range(len(files)) if n not in clean]
    if unclean:
        con.execute(f"DELETE FROM {raw} WHERE list_contains($files, file_no)", {"files": unclean})
    return {files[n].run_id for n in unclean}


def _unnamed_processes(con: duckdb.DuckDBPyConnection, runs: list[str]) -> set[str]:
    """The runs holding events of a pid without process_name metadata (timeline._report_unnamed_processes)."""
    rows = con.execute(
        f"SELECT DISTINCT run_id FROM timeline WHERE {IN_RUNS} AND {UNNAMED_PROCESS}", {"runs": runs}
    ).fetchall()
    return {r[0] for r in rows}
