"""Raw Chrome-trace events -> the timeline table: kinds by process name, exact ns, stream/task ids from args.

A track's meaning is resolved only through its ``process_name`` metadata event (pids are
synthetic ids). ``args`` JSON is parsed only for the kinds whose args are used.
"""

from __future__ import annotations

from decimal import Decimal

import duckdb

from analyzer.ingest import sql_values as v
from analyzer.ingest.timeline import timeline_store

# process_name -> timeline kind of its X / i events (flows are 'flow' whatever the process).
PROCESS_KINDS = {
    "Python": "framework_op",
    "CANN": "host_api",
    "Ascend Hardware": "device_task",
    "HCCL": "communication",
    "Communication": "communication",
    "Overlap Analysis": "overlap",
}
STEP_MARKER_PREFIX = "ProfilerStep#"
# A device task's stream and task id, as raw text of a raw row (``timeline_json.ARG_PATHS`` order).
DEVICE_STREAM, DEVICE_TASK = "coalesce(arg_fields[3], arg_fields[4], tid)", "arg_fields[5]"


def _kind_sql() -> str:
    cases = " ".join(f"WHEN '{p}' THEN '{k}'" for p, k in PROCESS_KINDS.items())
    return (
        f"CASE WHEN e.ph IN ('s', 't', 'f') THEN 'flow' "
        f"WHEN p.process = 'Python' AND starts_with(e.name, '{STEP_MARKER_PREFIX}') THEN 'step_marker' "
        f"ELSE coalesce(CASE p.process {cases} END, 'other') END"
    )


# The kinds of a device's own track group besides its tasks (whose device comes from the ops they match,
# timeline_store.py): host APIs (CANN), communication (HCCL) and overlap segments.
DEVICE_GROUP_KINDS = ("host_api", "communication", "overlap")


def track_device_sql(pid: str) -> str:
    """SQL: the device of a track, from its ``pid`` (raw text): the Ascend profilers write the pid of a device's
    track as (host pid << 10) | (track index << 5) | device id, one track group per device of a multi-device
    timeline. finalize.keep_track_devices keeps it only when the run's tasks ran on that device (a pid written
    another way names none)."""
    return f"CASE WHEN TRY_CAST({pid} AS BIGINT) >= {1 << 10} THEN (TRY_CAST({pid} AS BIGINT) & 31)::INTEGER END"


# A raw table's track key: a pid names its process within the file, or within the export (msprof's slices
# share their process_name events); with many runs' files in one raw table (``insert_timelines``), within the file.
BY_EXPORT, BY_FILE = "pid", "file_no, pid"


def process_names_sql(raw: str, by: str = BY_EXPORT) -> str:
    """SELECT pid (``by``) -> process name, from the process_name metadata events."""
    return (
        f"SELECT {by}, any_value(json_extract_string(args, '$.name')) AS process FROM {raw} "
        f"WHERE ph = 'M' AND name = 'process_name' GROUP BY {by}"
    )


def _typed_events_sql(raw: str, by: str) -> str:
    """Events with kind, process, thread name and the args fields the kind uses, as raw text."""
    return f"""
        SELECT e.*, e.rowid AS raw_row, p.process, t.thread_name, {_kind_sql()} AS kind
        FROM {raw} e
        LEFT JOIN ({process_names_sql(raw, by)}) p USING ({by})
        LEFT JOIN (SELECT {by}, tid, any_value(json_extract_string(args, '$.name')) AS thread_name
                   FROM {raw} WHERE ph = 'M' AND name = 'thread_name' GROUP BY {by}, tid) t USING ({by}, tid)
        WHERE e.ph IS NOT NULL AND e.ph NOT IN ('M', 'C') AND e.ts IS NOT NULL
    """


def _fields_sql(raw: str, by: str) -> str:
    """Pick the per-kind id fields out of the args values (``timeline_json.ARG_PATHS`` order; typed later)."""
    return f"""
        SELECT *, arg_fields AS a,
            CASE kind WHEN 'device_task' THEN {DEVICE_STREAM}
                      WHEN 'communication' THEN a[7] END AS raw_stream,
            CASE kind WHEN 'device_task' THEN {DEVICE_TASK} WHEN 'communication' THEN a[8] END AS raw_task,
            CASE kind WHEN 'device_task' THEN a[6] WHEN 'communication' THEN a[9]
                      WHEN 'host_api' THEN a[2] END AS raw_task_type,
            CASE WHEN kind IN ('device_task', 'host_api') THEN a[1] END AS raw_connection
        FROM ({_typed_events_sql(raw, by)})
    """


def _anchor_us(con: duckdb.DuckDBPyConnection, raw: str) -> Decimal | None:
    """The first event's ts: the trace's other events lie near it (sql_values.decimal_us_to_ns)."""
    rows = con.execute(f"SELECT ts FROM {raw} WHERE ts IS NOT NULL AND ph NOT IN ('M', 'C') LIMIT 1").fetchall()
    return rows[0][0] if rows else None


def insert_timeline(
    con: duckdb.DuckDBPyConnection, raw: str, run_id: str, left_out: frozenset[str] = frozenset()
) -> int:
    """Insert every timed non-metadata, non-counter event of the raw table into timeline, less the
    device tasks that rows already in supersede (``timeline_store.without_superseded``) and the
    events of the ``left_out`` kinds; returns rows."""
    return _insert(con, raw, "$run_id::VARCHAR", {"run_id": run_id}, left_out)


def insert_timelines(
    con: duckdb.DuckDBPyConnection, raw: str, runs: list[str], left_out: frozenset[str] = frozenset()
) -> int:
    """``insert_timeline`` of a raw table holding many runs' files, file ``file_no`` being run
    ``runs[file_no]``'s only timeline file: each run's rows are the ones it gets alone, in the same order."""
    return _insert(con, raw, f"{RUN_OF_FILE}::VARCHAR", {"runs": runs}, left_out, BY_FILE, v.IN_RUNS)


# The run of a raw row of a table holding many runs' files, with their run ids as the list $runs.
RUN_OF_FILE = "($runs::VARCHAR[])[file_no + 1]"


def _insert(
    con: duckdb.DuckDBPyConnection,
    raw: str,
    run_sql: str,
    params: dict[str, object],
    left_out: frozenset[str],
    by: str = BY_EXPORT,
    runs: str = "run_id = $run_id",
) -> int:
    """The insert of both: ``run_sql`` each row's run; ``runs``: the condition selecting the runs inserted."""
    start_ns = v.decimal_us_to_ns("ts", _anchor_us(con, raw))
    rows = f"""
        SELECT raw_row, {run_sql} AS run_id,
            CASE WHEN kind IN ({", ".join(f"'{k}'" for k in DEVICE_GROUP_KINDS)}) THEN {track_device_sql("pid")} END
                AS device_id, kind, process,
            TRY_CAST(tid AS BIGINT) AS thread_id, thread_name, name, cat AS category,
            {start_ns} AS start_ns,
            CASE WHEN ph = 'X' AND isfinite(dur) THEN dur END AS dur_us,
            TRY_CAST(start_ns + TRY_CAST(round(dur_us * 1000) AS HUGEINT) AS BIGINT) AS end_ns,
            {v.integer("raw_stream", "INTEGER")} AS stream_id,
            {v.integer("raw_task")} AS task_id,
            {v.trimmed_text("raw_task_type")} AS task_type,
            {v.integer("raw_connection")} AS connection_id,
            CASE WHEN kind = 'flow' THEN id END AS flow_id,
            CASE WHEN kind = 'flow' THEN ph END AS flow_phase
        FROM {v.with_trimmed(f"({_fields_sql(raw, by)})", ["raw_task_type"])}"""
    if left_out:
        rows += " WHERE NOT list_contains($left_out, kind)"
        params = {**params, "left_out": sorted(left_out)}
    kept = timeline_store.without_superseded(rows, runs)
    # In the raw rows' order (the files'): the joins give them in an order of DuckDB's choosing, on several
    # threads a new one on every read.
    ordered = f"SELECT * EXCLUDE (raw_row) FROM ({kept}) ORDER BY raw_row"
    return con.execute(f"INSERT INTO timeline BY NAME {ordered}", params).fetchall()[0][0]
