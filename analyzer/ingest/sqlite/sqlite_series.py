"""SQLite export time series -> counters (HBM, DDR, LLC, AICORE_FREQ, NPU_MEM), memory_records and op_memory.

Units follow the text exports: bandwidth bytes/s -> MB/s, NPU_MEM bytes -> KB (the timeline's
'NPU MEM' track), memory records bytes -> MB, LLC hit rate percent -> ratio.
"""

from __future__ import annotations

from analyzer.ingest.inserts import insert_rows
from analyzer.ingest.model import ReadContext
from analyzer.ingest.sqlite.sqlite_open import StagedDb
from analyzer.ingest.sqlite.sqlite_sql import KB, MB, device_of, exact_ns, int_or_null


def _kind(db: StagedDb, alias: str, table: str, column: str) -> str:
    """'read'/'write'/'app'/'device' of a type id: STRING_IDS in newer files, ENUM_MEMORY in older ones."""
    from_strings = f"lower({db.text(alias, table, column)})" if db.has("STRING_IDS") else "NULL"
    if not db.has("ENUM_MEMORY", "id", "name"):
        return from_strings
    from_enum = f'(SELECT any_value(lower(name)) FROM "{db.name("ENUM_MEMORY")}" e WHERE e.id = {alias}.{column})'
    return f"CASE WHEN {from_strings} IN ('read', 'write', 'app', 'device') THEN {from_strings} ELSE {from_enum} END"


def _counter_rows(db: StagedDb, table: str, alias: str, items: list[str]) -> str:
    return (
        f"SELECT {device_of(db, alias, table)}, {exact_ns(f'{alias}.timestampNs')} AS ts_ns, "
        f'{", ".join(items)} FROM "{db.name(table)}" {alias}'
    )


def _counter_selects(db: StagedDb) -> list[str]:
    parts = []
    if db.has("HBM", "timestampNs", "bandwidth", "type"):
        hbm_id = "CAST(h.hbmId AS VARCHAR)" if db.has("HBM", "hbmId") else "NULL"
        parts.append(
            _counter_rows(
                db,
                "HBM",
                "h",
                [
                    f"'hbm_' || {_kind(db, 'h', 'HBM', 'type')} AS counter",
                    f"{hbm_id} AS instance",
                    f"TRY_CAST(h.bandwidth AS DOUBLE) / {MB} AS value",
                    "'MB/s' AS unit",
                ],
            )
        )
    for direction in ("read", "write"):
        if db.has("DDR", "timestampNs", direction):
            parts.append(
                _counter_rows(
                    db,
                    "DDR",
                    "d",
                    [
                        f"'ddr_{direction}' AS counter",
                        "NULL AS instance",
                        f'TRY_CAST(d."{direction}" AS DOUBLE) / {MB} AS value',
                        "'MB/s' AS unit",
                    ],
                )
            )
    if db.has("LLC", "timestampNs", "throughput"):
        mode = _kind(db, "l", "LLC", "mode") if db.has("LLC", "mode") else "'read'"
        llc_id = "CAST(l.llcId AS VARCHAR)" if db.has("LLC", "llcId") else "NULL"
        parts.append(
            _counter_rows(
                db,
                "LLC",
                "l",
                [
                    f"'llc_' || coalesce({mode}, 'read') || '_throughput' AS counter",
                    f"{llc_id} AS instance",
                    f"TRY_CAST(l.throughput AS DOUBLE) / {MB} AS value",
                    "'MB/s' AS unit",
                ],
            )
        )
        if db.has("LLC", "hitRate"):
            parts.append(
                _counter_rows(
                    db,
                    "LLC",
                    "l",
                    [
                        "'llc_hit_rate' AS counter",
                        f"{llc_id} AS instance",
                        "TRY_CAST(l.hitRate AS DOUBLE) / 100 AS value",
                        "'ratio' AS unit",
                    ],
                )
            )
    if db.has("AICORE_FREQ", "timestampNs", "freq"):
        parts.append(
            _counter_rows(
                db,
                "AICORE_FREQ",
                "f",
                [
                    "'aicore_freq' AS counter",
                    "NULL AS instance",
                    "TRY_CAST(f.freq AS DOUBLE) AS value",
                    "'MHz' AS unit",
                ],
            )
        )
    parts.extend(_npu_mem_selects(db))
    return parts


def _npu_mem_selects(db: StagedDb) -> list[str]:
    if not db.has("NPU_MEM", "timestampNs", "type", "ddr", "hbm"):
        return []
    counter = f"'npu_mem_' || {_kind(db, 'n', 'NPU_MEM', 'type')} AS counter"
    series = {"DDR": "n.ddr", "HBM": "n.hbm", "Memory": "(n.ddr + n.hbm)"}
    return [
        _counter_rows(
            db,
            "NPU_MEM",
            "n",
            [
                counter,
                f"'{inst}' AS instance",
                f"TRY_CAST({expr} AS DOUBLE) / {KB} AS value",
                "'KB' AS unit",
            ],
        )
        for inst, expr in series.items()
    ]


def load_counters(db: StagedDb, ctx: ReadContext) -> int:
    """Every counter table present -> counters. Returns rows inserted."""
    parts = _counter_selects(db)
    if not parts:
        return 0
    return insert_rows(db.con, "counters", ctx.run_id, " UNION ALL ".join(f"({p})" for p in parts))


def _mb(alias: str, column: str) -> str:
    return f'TRY_CAST({alias}."{column}" AS DOUBLE) / {MB}'


def load_memory_records(db: StagedDb, ctx: ReadContext) -> int:
    """MEMORY_RECORD and NPU_MODULE_MEM -> memory_records (bytes -> MB)."""
    rows = 0
    t = "MEMORY_RECORD"
    if db.has(t, "component", "timestamp", "totalAllocated", "totalReserved"):
        active = _mb("m", "totalActive") if db.has(t, "totalActive") else "NULL"
        rows += insert_rows(
            db.con,
            "memory_records",
            ctx.run_id,
            (
                f"SELECT {device_of(db, 'm', t)}, 'memory_record' AS source, "
                f"{db.text('m', t, 'component')} AS component, "
                f"{exact_ns('m.timestamp')} AS ts_ns, {_mb('m', 'totalAllocated')} AS allocated_mb, "
                f'{_mb("m", "totalReserved")} AS reserved_mb, {active} AS active_mb FROM "{db.name(t)}" m'
            ),
        )
    t = "NPU_MODULE_MEM"
    if db.has(t, "moduleId", "timestampNs", "totalReserved"):
        module = (
            f'(SELECT any_value(name) FROM "{db.name("ENUM_MODULE")}" e WHERE e.id = n.moduleId)'
            if db.has("ENUM_MODULE", "id", "name")
            else "NULL"
        )
        rows += insert_rows(
            db.con,
            "memory_records",
            ctx.run_id,
            (
                f"SELECT {device_of(db, 'n', t)}, 'npu_module_mem' AS source, "
                f"coalesce({module}, CAST(n.moduleId AS VARCHAR)) AS component, {exact_ns('n.timestampNs')} AS ts_ns, "
                f'{_mb("n", "totalReserved")} AS reserved_mb FROM "{db.name(t)}" n'
            ),
        )
    return rows


def load_op_memory(db: StagedDb, ctx: ReadContext) -> int:
    """OP_MEMORY -> op_memory (bytes -> KB / MB, ns duration -> us)."""
    t = "OP_MEMORY"
    if not db.has(t, "name", "size", "allocationTime"):
        return 0
    opt = {
        c: f'o."{c}"' if db.has(t, c) else "NULL"
        for c in ("releaseTime", "duration", "allocationTotalAllocated", "allocationTotalReserved")
    }
    return insert_rows(
        db.con,
        "op_memory",
        ctx.run_id,
        (
            f"SELECT {device_of(db, 'o', t)}, {db.text('o', t, 'name')} AS op_name, "
            f"TRY_CAST(o.size AS DOUBLE) / {KB} AS size_kb, {exact_ns('o.allocationTime')} AS alloc_ns, "
            f"{int_or_null(opt['releaseTime'])} AS release_ns, "
            f"TRY_CAST({opt['duration']} AS DOUBLE) / 1000.0 AS duration_us, "
            f"TRY_CAST({opt['allocationTotalAllocated']} AS DOUBLE) / {MB} AS allocated_total_mb, "
            f'TRY_CAST({opt["allocationTotalReserved"]} AS DOUBLE) / {MB} AS reserved_total_mb FROM "{db.name(t)}" o'
        ),
    )
