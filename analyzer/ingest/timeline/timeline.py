"""trace_view.json (torch_npu) and msprof_*.json (msprof, slices unioned) -> the timeline and counters tables.

Step markers (``ProfilerStep#N``) become ``timeline`` rows of kind ``step_marker``; their step
windows are merged into ``steps`` by ``finalize`` (``step_windows.py``), whatever the reader order.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.ingest.model import ReadContext
from analyzer.ingest.sql_values import UNNAMED_PROCESS
from analyzer.ingest.timeline.superseded_events import SupersededTasks
from analyzer.ingest.timeline.timeline_counters import insert_counters
from analyzer.ingest.timeline.timeline_events import insert_timeline
from analyzer.ingest.timeline.timeline_json import (
    NEGATIVE_DUR,
    NEGATIVE_TS,
    NO_DUR,
    NO_TS,
    NOT_AN_EVENT,
    NS_LIKE_TS,
    create_raw_table,
    read_arrays_at_once,
    read_raw_events,
)
from analyzer.ingest.timeline.track_heads import head_tracks, skipped_tracks, tracks_named, tracks_of_kind


def load_timeline(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read every timeline file (all slices) of one export; returns timeline rows inserted."""
    raw = create_raw_table(con)
    try:
        if not _read_events(con, raw, paths, ctx):
            return 0
        _report_unusable_events(con, raw, paths, ctx)
        inserted = insert_timeline(con, raw, ctx.run_id, ctx.left_out_kinds)
        insert_counters(con, raw, ctx.run_id)
        _report_unnamed_processes(con, paths[0], ctx)
        return inserted
    finally:
        con.execute(f"DROP TABLE IF EXISTS {raw}")


def _read_events(con: duckdb.DuckDBPyConnection, raw: str, paths: tuple[Path, ...], ctx: ReadContext) -> bool:
    """Every array at once (slices in parallel), the tracks the heads name as left out skipped, the device
    tasks the run holds already left out and of the host-call tracks they name only a host call's args
    values kept; else (or on failure) one by one. True when something was read."""
    heads = head_tracks(paths)
    skipped, devices = skipped_tracks(heads, ctx.left_out_kinds), tracks_of_kind(heads, "device_task")
    hosts = tracks_of_kind(heads, "host_api")
    superseded = SupersededTasks.of_run(con, ctx.run_id, tuple(devices))
    named = {**skipped, **(devices if superseded else {}), **hosts}
    if read_arrays_at_once(con, raw, paths, ctx, tuple(skipped), superseded, tuple(hosts)):
        if not named or tracks_named(con, raw, named):
            return True
        con.execute(f"DELETE FROM {raw}")  # a head misled: every event
        if read_arrays_at_once(con, raw, paths, ctx):
            return True
    return any([read_raw_events(con, raw, p, n, ctx) for n, p in enumerate(paths)])


def _report_unusable_events(
    con: duckdb.DuckDBPyConnection, raw: str, paths: tuple[Path, ...], ctx: ReadContext
) -> None:
    """Say how many array elements were not events, had no usable ts, or X events without a duration."""
    bits = (NOT_AN_EVENT, NO_TS, NO_DUR, NEGATIVE_DUR, NS_LIKE_TS, NEGATIVE_TS)
    counts = ", ".join(f"count(*) FILTER (WHERE problems & {bit} <> 0)" for bit in bits)
    rows = con.execute(
        f"SELECT file_no, {counts} FROM {raw} WHERE problems <> 0 GROUP BY file_no ORDER BY file_no"
    ).fetchall()
    for file_no, no_ph, no_ts, no_dur, negative, ns_like, negative_ts in rows:
        file = paths[file_no]
        if no_ph:
            ctx.report(
                file,
                "",
                "warning",
                f"{no_ph} array elements are not trace events (no 'ph' field, or not an object); skipped",
                "hand-edited or corrupt trace",
            )
        if no_ts:
            ctx.report(
                file,
                "",
                "warning",
                f"{no_ts} events have no usable 'ts' (missing, or not a number); skipped",
                "each event needs ts in microseconds, as a number or a decimal string",
            )
        if no_dur:
            ctx.report(
                file,
                "",
                "warning",
                f"{no_dur} complete ('X') events have no usable 'dur'; kept with "
                "a NULL duration and left out of timing analyses",
                "corrupt or hand-edited trace",
            )
        if negative:
            ctx.report(
                file,
                "",
                "warning",
                f"{negative} complete ('X') events have a negative 'dur'",
                "the export is corrupt there",
            )
        if negative_ts:
            ctx.report(
                file,
                "field 'ts'",
                "warning",
                f"{negative_ts} events have a negative 'ts' (before 1970); kept, but their times are not trustworthy",
                "the export is corrupt there, or its clock was not set",
            )
        if ns_like:
            ctx.report(
                file,
                "field 'ts'",
                "error",
                f"{ns_like} events have a 'ts' too large for epoch microseconds: "
                "they look like nanoseconds; those events get no start time",
                "the trace was re-written with the wrong unit; re-export it",
            )


def _report_unnamed_processes(con: duckdb.DuckDBPyConnection, path: Path, ctx: ReadContext) -> None:
    missing = con.execute(
        f"SELECT count(*) FROM timeline WHERE run_id = ? AND {UNNAMED_PROCESS}", [ctx.run_id]
    ).fetchall()[0][0]
    if missing:
        ctx.report(
            path,
            "",
            "warning",
            f"{missing} events belong to a pid with no process_name metadata event; kept as kind 'other'",
            "the track's meaning is known only from its process_name",
        )
