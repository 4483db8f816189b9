"""SQLite export tracks -> timeline (CANN_API, PYTORCH_API, OVERLAP_ANALYSIS, HCCL) and steps (STEP_TIME)."""

from __future__ import annotations

from analyzer.ingest.inserts import insert_rows
from analyzer.ingest.model import ReadContext
from analyzer.ingest.sqlite.sqlite_open import StagedDb
from analyzer.ingest.sqlite.sqlite_sql import (
    connection_device,
    device_of,
    exact_ns,
    int_or_null,
    window,
)

# OVERLAP_ANALYSIS.type -> the segment names of the timeline's 'Overlap Analysis' track.
OVERLAP_TYPES = "MAP {0: 'Computing', 1: 'Communication', 2: 'Communication(Not Overlapped)', 3: 'Free'}"


def _api_level(db: StagedDb, alias: str, table: str) -> str:
    """ENUM_API_TYPE name of the row's type id ('acl', 'runtime', 'op', 'queue', ...)."""
    if not (db.has(table, "type") and db.has("ENUM_API_TYPE", "id", "name")):
        return "NULL"
    return f'(SELECT any_value(name) FROM "{db.name("ENUM_API_TYPE")}" e WHERE e.id = {alias}.type)'


def _thread(alias: str) -> list[str]:
    """globalTid = (pid << 32) | tid: the OS thread id and its track name."""
    tid = f"(CAST({alias}.globalTid AS BIGINT) & 4294967295)"
    return [f"{tid} AS thread_id", f"'Thread ' || {tid} AS thread_name"]


def load_host_apis(db: StagedDb, ctx: ReadContext) -> int:
    """CANN_API -> timeline 'host_api' (task_type = API level)."""
    t = "CANN_API"
    if not db.has(t, "startNs", "endNs", "name", "globalTid"):
        return 0
    conn = f"{int_or_null('a.connectionId')} AS connection_id" if db.has(t, "connectionId") else "NULL AS connection_id"
    select = ", ".join(
        [
            device_of(db, "a", t),
            "'host_api' AS kind",
            "'CANN' AS process",
            *_thread("a"),
            f"{db.text('a', t, 'name')} AS name",
            f"{_api_level(db, 'a', t)} AS task_type",
            conn,
            *window("a"),
        ]
    )
    return insert_rows(db.con, "timeline", ctx.run_id, f'SELECT {select} FROM "{db.name(t)}" a', order="a.rowid")


def load_framework_ops(db: StagedDb, ctx: ReadContext) -> int:
    """PYTORCH_API -> timeline 'framework_op', and 'step_marker' for ProfilerStep#N."""
    t = "PYTORCH_API"
    if not db.has(t, "startNs", "endNs", "name", "globalTid"):
        return 0
    name = db.text("p", t, "name")
    select = ", ".join(
        [
            device_of(db, "p", t),
            f"CASE WHEN {name} LIKE 'ProfilerStep#%' THEN 'step_marker' ELSE 'framework_op' END AS kind",
            "'Python' AS process",
            *_thread("p"),
            f"{name} AS name",
            f"{_api_level(db, 'p', t)} AS category",
            *window("p"),
        ]
    )
    return insert_rows(db.con, "timeline", ctx.run_id, f'SELECT {select} FROM "{db.name(t)}" p', order="p.rowid")


def load_overlap(db: StagedDb, ctx: ReadContext) -> int:
    """OVERLAP_ANALYSIS -> timeline 'overlap' segments named as the text timeline names them."""
    t = "OVERLAP_ANALYSIS"
    if "overlap" in ctx.left_out_kinds or not db.has(t, "startNs", "endNs", "type"):
        return 0
    name = f"coalesce({OVERLAP_TYPES}[CAST(o.type AS INTEGER)], 'type ' || o.type)"
    select = ", ".join(
        [
            device_of(db, "o", t),
            "'overlap' AS kind",
            "'Overlap Analysis' AS process",
            "CAST(o.type AS BIGINT) AS thread_id",
            f"{name} AS thread_name",
            f"{name} AS name",
            *window("o"),
        ]
    )
    return insert_rows(db.con, "timeline", ctx.run_id, f'SELECT {select} FROM "{db.name(t)}" o', order="o.rowid")


def load_communication_tracks(db: StagedDb, ctx: ReadContext) -> int:
    """COMMUNICATION_OP and COMMUNICATION_TASK_INFO x TASK -> timeline 'communication' (the HCCL track)."""
    rows = 0
    if db.has("COMMUNICATION_OP", "opName", "startNs", "endNs"):
        select = ", ".join(
            [
                device_of(db, "o", "COMMUNICATION_OP"),
                "'communication' AS kind",
                "'HCCL' AS process",
                "0 AS thread_id",
                "'Group 0 Communication' AS thread_name",
                f"{db.text('o', 'COMMUNICATION_OP', 'opName')} AS name",
                *window("o"),
            ]
        )
        rows += insert_rows(
            db.con,
            "timeline",
            ctx.run_id,
            f'SELECT {select} FROM "{db.name("COMMUNICATION_OP")}" o',
            order="o.rowid",
        )
    c = "COMMUNICATION_TASK_INFO"
    if db.has(c, "globalTaskId", "name") and db.has("TASK", "globalTaskId", "startNs", "endNs"):
        plane = "CAST(c.planeId AS BIGINT)" if db.has(c, "planeId") else "NULL"
        select = ", ".join(
            [
                int_or_null("t.deviceId", "INTEGER") + " AS device_id",
                "'communication' AS kind",
                "'HCCL' AS process",
                f"{plane} AS thread_id",
                f"'Plane ' || {plane} AS thread_name",
                f"{db.text('c', c, 'name')} AS name",
                (f"{db.text('c', c, 'taskType')} AS task_type" if db.has(c, "taskType") else "NULL AS task_type"),
                f"{int_or_null('t.streamId', 'INTEGER')} AS stream_id",
                f"{int_or_null('t.taskId')} AS task_id",
                *window("t"),
            ]
        )
        rows += insert_rows(
            db.con,
            "timeline",
            ctx.run_id,
            f'SELECT {select} FROM "{db.name(c)}" c JOIN "{db.name("TASK")}" t ON t.globalTaskId = c.globalTaskId',
            order="c.rowid",
        )
    return rows


def load_step_times(db: StagedDb, ctx: ReadContext) -> int:
    """STEP_TIME(id, startNs, endNs) -> steps windows (source 'db'), merged with rows already there."""
    t = "STEP_TIME"
    if not db.has(t, "id", "startNs", "endNs"):
        return 0
    work = db.work_table("steps")
    db.con.execute(
        f"CREATE OR REPLACE TEMP TABLE {work} AS SELECT CAST(s.id AS BIGINT) AS step_id, "
        f'{exact_ns("s.startNs")} AS start_ns, {exact_ns("s.endNs")} AS end_ns FROM "{db.name(t)}" s'
    )
    return upsert_steps(db, ctx.run_id, work, ("start_ns", "end_ns"))


def upsert_steps(db: StagedDb, run_id: str, staged: str, columns: tuple[str, ...]) -> int:
    """Merge staged step rows (step_id + columns) into steps: fill an existing row of the step, else insert."""
    sets = ", ".join(f"{c} = coalesce(s.{c}, steps.{c})" for c in columns)
    db.con.execute(
        f"UPDATE steps SET {sets}, source = coalesce(steps.source, 'db') FROM {staged} s "
        f"WHERE steps.run_id = $r AND steps.step_id IS NOT DISTINCT FROM s.step_id",
        {"r": run_id},
    )
    db.con.execute(
        f"DELETE FROM {staged} s WHERE EXISTS (SELECT 1 FROM steps x WHERE x.run_id = ? "
        f"AND x.step_id IS NOT DISTINCT FROM s.step_id)",
        [run_id],
    )
    return insert_rows(
        db.con,
        "steps",
        run_id,
        f"SELECT step_id, {', '.join(columns)}, 'db' AS source FROM {staged}",
    )


def _flow_ends(db: StagedDb, cat: str, host: str, process: str) -> str:
    """'s' rows at the host events and an 'f' row at the first device task of each connection of a category."""
    cats = f"(SELECT DISTINCT connectionId FROM \"{db.name('connectionCats')}\" WHERE cat = '{cat}')"
    tid = "(CAST(h.globalTid AS BIGINT) & 4294967295)"
    stream = int_or_null("t.streamId", "INTEGER")
    common = (
        f"'flow' AS kind, '{cat}' AS category, '{cat}' || k.connectionId AS name, "
        f"CAST(k.connectionId AS VARCHAR) AS flow_id, CAST(k.connectionId AS BIGINT) AS connection_id"
    )
    start = (
        f"SELECT {connection_device(db, 'k.connectionId')} AS device_id, '{process}' AS process, {tid} AS thread_id, "
        f"{exact_ns('h.startNs')} AS start_ns, 's' AS flow_phase, {common} FROM {cats} k "
        f"JOIN {host} h ON h.connectionId = k.connectionId"
    )
    finish = (
        f"SELECT {int_or_null('t.deviceId', 'INTEGER')} AS device_id, 'Ascend Hardware' AS process, "
        f"{stream} AS thread_id, {exact_ns('t.startNs')} AS start_ns, 'f' AS flow_phase, {common}, "
        f'{stream} AS stream_id FROM {cats} k JOIN "{db.name("TASK")}" t ON t.connectionId = k.connectionId '
        f"QUALIFY row_number() OVER (PARTITION BY k.connectionId ORDER BY t.startNs, t.streamId) = 1"
    )
    return f"({start}) UNION ALL BY NAME ({finish})"


def load_flows(db: StagedDb, ctx: ReadContext) -> int:
    """connectionCats -> timeline 'flow' rows: CANN API -> device task ('HostToDevice') and torch op ->
    device task ('async_npu', PYTORCH_API.connectionId indexes CONNECTION_IDS)."""
    if "flow" in ctx.left_out_kinds or not (
        db.has("connectionCats", "connectionId", "cat") and db.has("TASK", "connectionId", "startNs")
    ):
        return 0
    parts = []
    if db.has("CANN_API", "connectionId", "startNs", "globalTid"):
        parts.append(_flow_ends(db, "HostToDevice", f'"{db.name("CANN_API")}"', "CANN"))
    if db.has("PYTORCH_API", "connectionId", "startNs", "globalTid") and db.has("CONNECTION_IDS", "id", "connectionId"):
        host = (
            f'(SELECT p.startNs, p.globalTid, c.connectionId FROM "{db.name("PYTORCH_API")}" p '
            f'JOIN "{db.name("CONNECTION_IDS")}" c ON c.id = p.connectionId)'
        )
        parts.append(_flow_ends(db, "async_npu", host, "Python"))
    if not parts:
        return 0
    # in no table's order: by flow (its connection), its start before its end, then by where each end lies
    return insert_rows(
        db.con,
        "timeline",
        ctx.run_id,
        " UNION ALL BY NAME ".join(f"({p})" for p in parts),
        order="connection_id, flow_phase DESC, category, start_ns, device_id, thread_id, stream_id",
    )
