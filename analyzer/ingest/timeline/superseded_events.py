"""The timeline JSON's device tasks that the run's task_time rows supersede, left out while the raw table fills.

msprof writes each device task to task_time_*.csv, read first, and to msprof_*.json: a third of a
large export's events. ``timeline_store.without_superseded`` leaves them out of the timeline; left
out already as the JSON is read, they are never stored in the raw table, nor carried through the
name joins and typing of every raw row (``timeline_events``). Which pids are device tracks is known
from the heads of the files (``track_heads``), a hint checked after the read like the skipped tracks.
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

    def without(self, raw_rows: str) -> str:
        """SQL of the raw rows ``raw_rows`` selects less the superseded device tasks. An event with a
        problem is kept whatever its track: the raw table counts it (``timeline._report_unusable_events``)."""
        device = "problems = 0 AND ph NOT IN ('M', 'C', 's', 't', 'f') AND list_contains($device_tracks, pid)"
        start_ns = v.decimal_us_to_ns("ts", self.anchor_us)
        keyed = f"""
            SELECT *, $superseding_run::VARCHAR AS run_id, NULL::INTEGER AS device_id,
                CASE WHEN _device THEN 'device_task' END AS kind,
                {v.integer("_stream", "INTEGER")} AS stream_id, {v.integer("_task")} AS task_id,
                CASE WHEN _device THEN {start_ns} END AS start_ns
            FROM (SELECT *, {device} AS _device, CASE WHEN {device} THEN {DEVICE_STREAM} END AS _stream,
                      CASE WHEN {device} THEN {DEVICE_TASK} END AS _task
                  FROM ({raw_rows}))"""
        kept = timeline_store.without_superseded(keyed, "run_id = $superseding_run")
        return (
            f"SELECT * EXCLUDE (_device, _stream, _task, run_id, device_id, kind, stream_id, task_id, start_ns) "
            f"FROM ({kept})"
        )
