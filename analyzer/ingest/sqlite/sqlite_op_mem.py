"""NPU_OP_MEM (raw allocate / release events of a database export) -> op_memory and memory_records.

msprof pairs these events itself when it writes operator_memory_*.csv (each allocation with the next
release of the same operator and address) and writes the totals after each event as memory_record_*.csv;
this does the same for a database that holds only the raw events (no OP_MEMORY / MEMORY_RECORD).
"""

from __future__ import annotations

from analyzer.ingest.inserts import insert_rows
from analyzer.ingest.model import ReadContext
from analyzer.ingest.sqlite.sqlite_open import StagedDb
from analyzer.ingest.sqlite.sqlite_sql import KB, MB, device_of, exact_ns

T = "NPU_OP_MEM"
COLUMNS = ("operatorName", "addr", "type", "size", "timestampNs")


def _event_kind(db: StagedDb) -> str:
    """'allocate' / 'release' of a type id (STRING_IDS in newer files, ENUM_MEMORY in older ones); a signed
    size (older raw form) where the id is neither."""
    text = f"lower({db.text('e', T, 'type')})" if db.has("STRING_IDS") else "NULL"
    enum = (
        f'(SELECT any_value(lower(name)) FROM "{db.name("ENUM_MEMORY")}" m WHERE m.id = e.type)'
        if db.has("ENUM_MEMORY", "id", "name")
        else "NULL"
    )
    sign = "CASE WHEN TRY_CAST(e.size AS DOUBLE) < 0 THEN 'release' ELSE 'allocate' END"
    both = "('allocate', 'release')"
    return f"CASE WHEN {text} IN {both} THEN {text} WHEN {enum} IN {both} THEN {enum} ELSE {sign} END"


def _events(db: StagedDb) -> str:
    """One row per event with its kind and the next event of the same operator, address and device."""
    total = {
        c: f"TRY_CAST(e.{c} AS DOUBLE) / {MB}" if db.has(T, c) else "NULL" for c in ("totalAllocate", "totalReserve")
    }
    component = db.text("e", T, "component") if db.has(T, "component") else "NULL"
    return f"""
        SELECT *, lead(kind) OVER w AS next_kind, lead(ts_ns) OVER w AS next_ns FROM (
            SELECT {device_of(db, "e", T)}, {db.text("e", T, "operatorName")} AS op_name, e.addr AS addr,
                   {_event_kind(db)} AS kind, abs(TRY_CAST(e.size AS DOUBLE)) AS size_b,
                   {exact_ns("e.timestampNs")} AS ts_ns, {total["totalAllocate"]} AS allocated_mb,
                   {total["totalReserve"]} AS reserved_mb, {component} AS component
            FROM "{db.name(T)}" e)
        WINDOW w AS (PARTITION BY op_name, addr, device_id ORDER BY ts_ns, kind)"""


def _outside_tasks(db: StagedDb, ctx: ReadContext) -> bool:
    """True (and said) when every event lies outside the tasks' window: a table from another session."""
    if not db.has("TASK", "startNs", "endNs"):
        return False
    sql = f"""SELECT count(*), min(ts), max(ts), (SELECT min({exact_ns("startNs")}) FROM "{db.name("TASK")}"),
                     (SELECT max({exact_ns("endNs")}) FROM "{db.name("TASK")}")
              FROM (SELECT {exact_ns("timestampNs")} AS ts FROM "{db.name(T)}")"""
    n, first, last, t0, t1 = db.con.execute(sql).fetchall()[0]
    if not n or t0 is None or first is None or (last >= t0 and first <= t1):
        return False
    ctx.report(
        db.path,
        T,
        "warning",
        f"its {n} allocate / release events ({first} .. {last} ns) lie outside the device tasks' window "
        f"({t0} .. {t1} ns): they are from another profiling session",
        "operator memory is not read from it; re-export the session with its memory data",
    )
    return True


def load_npu_op_memory(db: StagedDb, ctx: ReadContext) -> int:
    """NPU_OP_MEM -> op_memory (and memory_records per component) when the file has no OP_MEMORY
    (resp. MEMORY_RECORD). Returns rows inserted."""
    if not db.has(T, *COLUMNS) or db.has("OP_MEMORY") or _outside_tasks(db, ctx):
        return 0
    events = _events(db)
    rows = insert_rows(
        db.con,
        "op_memory",
        ctx.run_id,
        f"""SELECT device_id, op_name, size_b / {KB} AS size_kb, ts_ns AS alloc_ns,
                   CASE WHEN next_kind = 'release' THEN next_ns END AS release_ns,
                   CASE WHEN next_kind = 'release' THEN (next_ns - ts_ns) / 1000.0 END AS duration_us,
                   allocated_mb AS allocated_total_mb, reserved_mb AS reserved_total_mb
            FROM ({events}) WHERE kind = 'allocate'""",
    )
    if not db.has("MEMORY_RECORD"):
        rows += insert_rows(
            db.con,
            "memory_records",
            ctx.run_id,
            f"""SELECT device_id, 'memory_record' AS source, coalesce(component, 'GE') AS component, ts_ns,
                       allocated_mb, reserved_mb FROM ({events}) WHERE allocated_mb IS NOT NULL""",
        )
    return rows
