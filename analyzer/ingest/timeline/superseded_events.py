"""The timeline JSON's device tasks that the run's task_time rows supersede, deleted from the raw table as it fills.

msprof writes each device task to task_time_*.csv, read first, and to msprof_*.json: a third of a
large export's events. ``timeline_store.without_superseded`` leaves them out of the timeline; deleted
from the raw table right after the JSON is read, they are never carried through the name joins and
typing of every raw row (``timeline_events``). Deleted, not left out by an anti join while inserting:
DuckDB's join gives its rows in another order than the files' (on several threads, in no fixed one), and
the raw rows' order is the timeline's. Which pids are device tracks is known from the heads of the files
(``track_heads``), a hint checked after the read like the skipped tracks.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import duckdb

from analyzer.ingest import sql_values as v
from analyzer.ingest.timeline import timeline_store
from analyzer.ingest.timeline.timeline_events import DEVICE_STREAM, DEVICE_TASK


@dataclass(frozen=True)
class SupersededTasks:
    """What a raw insert needs to leave a run's superseded device tasks out: the run, the pids of its
    device tracks (``track_heads.tracks_of_kind``), and a start of one of its tasks, the anchor of the
    nanosecond arithmetic (``sql_values.decimal_us_to_ns``: any anchor gives the same values)."""

    run_id: str
    pids: tuple[str, ...]
    anchor_us: Decimal

    @classmethod
    def of_run(cls, con: duckdb.DuckDBPyConnection, run_id: str, pids: tuple[str, ...]) -> SupersededTasks | None:
        """None when no pid is a device track or the run holds no task naming its device (nothing to supersede)."""
        if not pids:
            return None
        rows = con.execute(
            "SELECT start_ns FROM timeline WHERE run_id = ? AND kind = 'device_task' "
            "AND device_id IS NOT NULL AND start_ns IS NOT NULL LIMIT 1",
            [run_id],
        ).fetchall()
        return cls(run_id, pids, Decimal(rows[0][0]).scaleb(-3)) if rows else None

    def params(self) -> dict[str, object]:
        return {"superseding_run": self.run_id, "device_tracks": list(self.pids)}

    def delete_from(self, con: duckdb.DuckDBPyConnection, raw: str) -> None:
        """Delete from the raw table ``raw`` the superseded device tasks: the events of the device tracks
        whose (stream, task, start) the run holds on a timeline row naming a device, as
        ``timeline_store.without_superseded`` leaves them out. An event with a problem is kept whatever its
        track: the raw table counts it (``timeline._report_unusable_events``)."""
        device = "problems = 0 AND ph NOT IN ('M', 'C', 's', 't', 'f') AND list_contains($device_tracks, pid)"
        keyed = f"""
            SELECT raw_row, {v.integer("_stream", "INTEGER")} AS stream_id, {v.integer("_task")} AS task_id,
                {v.decimal_us_to_ns("ts", self.anchor_us)} AS start_ns
            FROM (SELECT rowid AS raw_row, ts, {DEVICE_STREAM} AS _stream, {DEVICE_TASK} AS _task
                  FROM {raw} WHERE {device})"""
        con.execute(
            f"DELETE FROM {raw} WHERE rowid IN (SELECT e.raw_row FROM ({keyed}) e SEMI JOIN "
            f"({timeline_store.superseding_tasks('run_id = $superseding_run')}) d ON "
            f"{timeline_store.same_task('d', 'e')})",
            self.params(),
        )
