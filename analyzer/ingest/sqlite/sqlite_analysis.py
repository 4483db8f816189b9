"""Communication and step analyses of the SQLite exports -> comm_ops and steps.

``COMMUNICATION_OP`` (profiler db) gives each communication op's exact window; ``analysis.db``
/ ``communication_analyzer.db`` give its time breakdown (``CommAnalyzerTime``, in ms, as the
communication JSON), its bandwidth (``CommAnalyzerBandwidth``: MB, GB/s) and the per-step
decomposition (``StepTraceTime``, in us, as step_trace_time.csv). Either file may be read
first: rows are merged by op name or step id.
"""

from __future__ import annotations

from analyzer.ingest.inserts import insert_rows
from analyzer.ingest.model import ReadContext
from analyzer.ingest.sqlite.sqlite_open import StagedDb
from analyzer.ingest.sqlite.sqlite_sql import device_of, window
from analyzer.ingest.sqlite.sqlite_timeline import upsert_steps

# StepTraceTime's columns -> the steps' columns (the job tables read them too: job/analysis_db_scan.py).
STEP_TRACE_COLUMNS = {
    "computing": "computing_us",
    "communication_not_overlapped": "comm_not_overlapped_us",
    "overlapped": "overlapped_us",
    "communication": "comm_us",
    "free": "free_us",
    "stage": "stage_us",
    "bubble": "bubble_us",
    "communication_not_overlapped_and_exclude_receive": "comm_not_overlapped_excl_receive_us",
    "preparing": "preparing_us",
}
_TIME_COLUMNS = {
    "elapse_time": "elapse_us",
    "transit_time": "transit_us",
    "wait_time": "wait_us",
    "synchronization_time": "sync_us",
    "idle_time": "idle_us",
}


def _step_id(expr: str) -> str:
    """'step50' or '50' -> 50; anything else NULL."""
    return f"TRY_CAST(regexp_extract(CAST({expr} AS VARCHAR), '(\\d+)\\s*$', 1) AS BIGINT)"


def load_step_trace_time(db: StagedDb, ctx: ReadContext) -> int:
    """analysis.db StepTraceTime (us, as step_trace_time.csv) -> steps decomposition, merged by step id."""
    t = "StepTraceTime"
    if not db.has(t, "step"):
        return 0
    present = {raw: col for raw, col in STEP_TRACE_COLUMNS.items() if db.has(t, raw)}
    items = [f'TRY_CAST(s."{raw}" AS DOUBLE) AS {col}' for raw, col in present.items()]
    work = db.work_table("step_trace")
    db.con.execute(
        f"CREATE OR REPLACE TEMP TABLE {work} AS SELECT {_step_id('s.step')} AS step_id, "
        f'{", ".join(items)} FROM "{db.name(t)}" s'
    )
    return upsert_steps(db, ctx.run_id, work, tuple(present.values()))


def upsert_comm_ops(db: StagedDb, run_id: str, work: str, overwrite: tuple[str, ...], fill: tuple[str, ...]) -> int:
    """Merge work rows into comm_ops by op name: ``overwrite`` columns win, ``fill`` ones fill NULLs only."""
    sets = [f"{c} = coalesce(s.{c}, comm_ops.{c})" for c in overwrite]
    sets += [f"{c} = coalesce(comm_ops.{c}, s.{c})" for c in fill]
    db.con.execute(
        f"UPDATE comm_ops SET {', '.join(sets)} FROM {work} s "
        f"WHERE comm_ops.run_id = $r AND comm_ops.op_name = s.op_name",
        {"r": run_id},
    )
    db.con.execute(
        f"DELETE FROM {work} WHERE op_name IN (SELECT op_name FROM comm_ops WHERE run_id = ? AND op_name IS NOT NULL)",
        [run_id],
    )
    return insert_rows(db.con, "comm_ops", run_id, f"SELECT * FROM {work}")


def load_communication_op(db: StagedDb, ctx: ReadContext) -> int:
    """COMMUNICATION_OP -> comm_ops windows (exact start, elapsed time)."""
    t = "COMMUNICATION_OP"
    if not db.has(t, "opName", "startNs", "endNs"):
        return 0
    group = db.text("o", t, "groupName") if db.has(t, "groupName") else "NULL"
    op_type = db.text("o", t, "opType") if db.has(t, "opType") else db.text("o", t, "opName")
    start, _end, dur = window("o")
    work = db.work_table("comm_op")
    db.con.execute(
        f"CREATE OR REPLACE TEMP TABLE {work} AS SELECT {device_of(db, 'o', t)}, "
        f"{db.text('o', t, 'opName')} AS op_name, {group} AS group_name, "
        f"CASE WHEN lower({op_type}) SIMILAR TO '.*(send|recv|receive|batch_?send_?recv).*' THEN 'p2p' "
        f"ELSE 'collective' END AS op_kind, {start}, {dur.replace('dur_us', 'elapse_us')} "
        f'FROM "{db.name(t)}" o'
    )
    return upsert_comm_ops(db, ctx.run_id, work, ("start_ns", "elapse_us", "device_id"), ("group_name", "op_kind"))


def load_comm_analyzer(db: StagedDb, ctx: ReadContext) -> int:
    """CommAnalyzerTime (ms) + CommAnalyzerBandwidth -> comm_ops breakdown, merged by op name."""
    t = "CommAnalyzerTime"
    if not db.has(t, "hccl_op_name"):
        return 0
    times = [f'TRY_CAST(c."{raw}" AS DOUBLE) * 1000 AS {col}' for raw, col in _TIME_COLUMNS.items() if db.has(t, raw)]
    start = (
        "CAST(round(TRY_CAST(c.start_timestamp AS DOUBLE) * 1000) AS BIGINT)"
        if db.has(t, "start_timestamp")
        else "NULL"
    )
    work = db.work_table("comm_time")
    db.con.execute(
        f"CREATE OR REPLACE TEMP TABLE {work} AS SELECT c.hccl_op_name AS op_name, "
        f"{'c.group_name' if db.has(t, 'group_name') else 'NULL'} AS group_name, "
        f"{'c.type' if db.has(t, 'type') else 'NULL'} AS op_kind, "
        f"{_step_id('c.step') if db.has(t, 'step') else 'NULL'} AS step_id, {start} AS start_ns, "
        f'{", ".join(times) or "NULL AS elapse_us"} FROM "{db.name(t)}" c'
    )
    breakdown = tuple(col for raw, col in _TIME_COLUMNS.items() if db.has(t, raw) and col != "elapse_us")
    db.con.execute(f"ALTER TABLE {work} ADD COLUMN wait_ratio DOUBLE")
    db.con.execute(f"ALTER TABLE {work} ADD COLUMN sync_ratio DOUBLE")
    if {"wait_us", "transit_us"} <= set(breakdown):
        db.con.execute(f"UPDATE {work} SET wait_ratio = wait_us / nullif(wait_us + transit_us, 0)")
    if {"sync_us", "transit_us"} <= set(breakdown):
        db.con.execute(f"UPDATE {work} SET sync_ratio = sync_us / nullif(sync_us + transit_us, 0)")
    _add_bandwidth(db, work)
    rows = upsert_comm_ops(
        db,
        ctx.run_id,
        work,
        (
            "group_name",
            "op_kind",
            "step_id",
            *breakdown,
            "wait_ratio",
            "sync_ratio",
            "transit_size_mb",
            "bandwidth_gb_per_s",
            "transport",
        ),
        ("start_ns", "elapse_us"),
    )
    return rows


def _add_bandwidth(db: StagedDb, work: str) -> None:
    """Main transport per op: the largest transit size, SDMA (an aggregate) only when alone."""
    for col, typ in (
        ("transit_size_mb", "DOUBLE"),
        ("bandwidth_gb_per_s", "DOUBLE"),
        ("transport", "VARCHAR"),
    ):
        db.con.execute(f"ALTER TABLE {work} ADD COLUMN {col} {typ}")
    t = "CommAnalyzerBandwidth"
    if not db.has(t, "hccl_op_name", "transport_type", "transit_size", "bandwidth"):
        return
    db.con.execute(
        f"UPDATE {work} SET transit_size_mb = b.size, bandwidth_gb_per_s = b.bw, transport = b.transport_type "
        f"FROM (SELECT hccl_op_name, transport_type, TRY_CAST(transit_size AS DOUBLE) AS size, "
        f"TRY_CAST(bandwidth AS DOUBLE) AS bw, row_number() OVER (PARTITION BY hccl_op_name ORDER BY "
        f"TRY_CAST(transit_size AS DOUBLE) DESC NULLS LAST, transport_type = 'SDMA', transport_type) AS rn "
        f'FROM "{db.name(t)}") b WHERE b.rn = 1 AND b.hccl_op_name = {work}.op_name'
    )
