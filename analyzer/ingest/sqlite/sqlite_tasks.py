"""SQLite export device tasks -> ops (TASK x COMPUTE_TASK_INFO, PMU pivot; COMMUNICATION_OP) and timeline rows.

TASK_PMU_INFO holds raw metric names (``aic_mte2_ratio``, ``aic_total_time``) in long format; PMU
times there are nanoseconds (``aiv_total_time`` 49912.99 for a 53.761 us task), unrounded,
while the CSV writes microseconds: times are divided by 1000 so both land alike.
"""

from __future__ import annotations

import pyarrow as pa

from analyzer.ingest import sql_values as v
from analyzer.ingest.inserts import insert_rows
from analyzer.ingest.model import ReadContext
from analyzer.ingest.pmu_names import is_pipe_column, normalize_metric
from analyzer.ingest.schema import PIPE_COLUMN_NAMES
from analyzer.ingest.sqlite.sqlite_open import StagedDb
from analyzer.ingest.sqlite.sqlite_sql import device_of, int_or_null, window

# Metric / core combinations msprof removes from op_summary (UNSUPPORTED_HEADER): the DB still
# carries them, always 0; dropping them makes DB and text land alike.
UNSUPPORTED_PMU_PREFIXES = ("aic_vec_", "aiv_mac_", "aiv_mte1_", "aic_ub_", "aiv_fixpipe_")
# What the text twin writes as the task type of a communication op row: torch_npu's
# kernel_details says 'HCCL', msprof's op_summary says 'COMMUNICATION'.
COMM_TASK_TYPE = {"torch_npu": "HCCL", "mindspore": "HCCL"}


def _scale(norm: str | None) -> float:
    """Factor to the normalized unit: the DB writes PMU times in ns, the schema (like the CSV) has us.

    >>> _scale("aiv_time_us"), _scale("aic_mte2_ratio")
    (0.001, 1.0)
    """
    return 0.001 if norm is not None and norm.endswith("_time_us") else 1.0


def _metric_map(db: StagedDb) -> str | None:
    """Stage PMU name key -> normalized name (NULL: dropped), pipe flag, unit scale: its name.

    The key is TASK_PMU_INFO.name as stored (a STRING_IDS id, or text): the pivot joins on it as is.
    """
    pairs = db.con.execute(
        f"SELECT key, text FROM {db.distinct_text('TASK_PMU_INFO', 'name')} WHERE text IS NOT NULL"
    ).fetchall()
    keys, raw_names = [p[0] for p in pairs], [p[1] for p in pairs]
    norm = [normalize_metric(r) for r in raw_names]
    keep = [None if n.startswith(UNSUPPORTED_PMU_PREFIXES) else n for n in norm]
    table = db.work_table("metric_map")
    db.con.register(
        "_sq_map",
        pa.table(
            {
                "key": pa.array(keys),
                "norm": pa.array(keep, pa.string()),
                "pipe": pa.array([k is not None and is_pipe_column(k) for k in keep]),
                "scale": pa.array([_scale(k) for k in keep], pa.float64()),
            }
        ),
    )
    try:
        db.con.execute(f'CREATE OR REPLACE TEMP TABLE "{table}" AS SELECT * FROM _sq_map')
    finally:
        db.con.unregister("_sq_map")
    return table


def _pmu_pivot(db: StagedDb) -> str | None:
    """A subquery: one row per globalTaskId with the pipe columns and extra_metrics; None without PMU."""
    if not db.has("TASK_PMU_INFO", "globalTaskId", "name", "value"):
        return None
    mapping = _metric_map(db)
    items = []
    for col in PIPE_COLUMN_NAMES:
        agg = f"max(value) FILTER (WHERE norm = '{col}')"
        items.append(f"CAST({agg} AS BIGINT) AS {col}" if col.endswith("_cycles") else f"{agg} AS {col}")
    items.append(
        "CASE WHEN count(*) FILTER (WHERE NOT pipe) > 0 THEN map_from_entries("
        "list(struct_pack(k := norm, v := value) ORDER BY norm) FILTER (WHERE NOT pipe)) "
        "END AS extra_metrics"
    )
    return (
        f"(SELECT gid, {', '.join(items)} FROM (SELECT p.globalTaskId AS gid, m.norm, m.pipe, "
        f'TRY_CAST(p.value AS DOUBLE) * m.scale AS value FROM "{db.name("TASK_PMU_INFO")}" p '
        f'JOIN "{mapping}" m ON m.key = p."name" '
        f"WHERE m.norm IS NOT NULL AND isfinite(TRY_CAST(p.value AS DOUBLE))) GROUP BY gid)"
    )


def _optional(db: StagedDb, alias: str, table: str, target: str, *candidates: str, how: str = "int") -> str:
    col = db.first_column(table, *candidates)
    if col is None:
        return f"NULL AS {target}"
    ref = f'{alias}."{col}"'
    expr = {
        "int": lambda: int_or_null(ref, "INTEGER"),
        "bigint": lambda: int_or_null(ref),
        "text": lambda: db.text(alias, table, col),
        "unquoted": lambda: v.without_quotes(db.text(alias, table, col)),
        "bool": lambda: v.yes_no(db.text(alias, table, col)),
        "ns_to_us": lambda: f"TRY_CAST({ref} AS DOUBLE) / 1000.0",
    }[how]()
    return f"{expr} AS {target}"


def _compute_select(db: StagedDb) -> list[str]:
    c = "COMPUTE_TASK_INFO"
    items = [
        f"{db.text('c', c, 'name')} AS op_name",
        _optional(db, "c", c, "op_type", "opType", how="text"),
        _optional(db, "c", c, "task_type", "taskType", how="text"),
        _optional(db, "c", c, "op_state", "opState", how="text"),
        _optional(db, "c", c, "wait_us", "waitNs", how="ns_to_us"),
        _optional(db, "c", c, "block_dim", "blockNum", "blockDim", "block_dim"),
        _optional(db, "c", c, "mix_block_dim", "mixBlockNum", "mixBlockDim", "mix_block_dim"),
        _optional(db, "c", c, "hf32_eligible", "hf32Eligible", how="bool"),
    ]
    for target, raw in (
        ("input_shapes", "inputShapes"),
        ("input_dtypes", "inputDataTypes"),
        ("input_formats", "inputFormats"),
        ("output_shapes", "outputShapes"),
        ("output_dtypes", "outputDataTypes"),
        ("output_formats", "outputFormats"),
    ):
        items.append(_optional(db, "c", c, target, raw, how="unquoted"))
    return items


def _task_select(db: StagedDb) -> list[str]:
    t = "TASK"
    return [
        _optional(db, "t", t, "device_id", "deviceId"),
        _optional(db, "t", t, "model_id", "modelId", how="bigint"),
        _optional(db, "t", t, "stream_id", "streamId"),
        _optional(db, "t", t, "task_id", "taskId", how="bigint"),
        _optional(db, "t", t, "context_id", "contextId", how="bigint"),
        *window("t"),
    ]


def load_compute_ops(db: StagedDb, ctx: ReadContext) -> int:
    """TASK x COMPUTE_TASK_INFO (+ pivoted TASK_PMU_INFO) -> ops. Returns rows inserted."""
    if not (db.has("TASK", "startNs", "endNs", "globalTaskId") and db.has("COMPUTE_TASK_INFO", "globalTaskId", "name")):
        ctx.report(
            db.path,
            "table TASK / COMPUTE_TASK_INFO",
            "warning",
            "no compute tasks: TASK or COMPUTE_TASK_INFO (or their globalTaskId column) is absent",
            "ops will hold no compute operators from this file",
        )
        return 0
    pmu = _pmu_pivot(db)
    if pmu is None:
        ctx.report(
            db.path,
            "table TASK_PMU_INFO",
            "info",
            "no TASK_PMU_INFO table: PMU pipeline columns were not collected and stay NULL",
            "collect with aic_metrics=PipeUtilization (task-based)",
        )
    select = ", ".join(_task_select(db) + _compute_select(db))
    pmu_cols = "pmu.* EXCLUDE (gid)" if pmu else "NULL AS extra_metrics"
    join = f"LEFT JOIN {pmu} pmu ON pmu.gid = t.globalTaskId" if pmu else ""
    return insert_rows(
        db.con,
        "ops",
        ctx.run_id,
        f'SELECT {select}, {pmu_cols} FROM "{db.name("TASK")}" t '
        f'JOIN "{db.name("COMPUTE_TASK_INFO")}" c ON c.globalTaskId = t.globalTaskId {join}',
        order="t.rowid",  # the TASK table's order, as its rows stand in the database
    )


def load_communication_ops(db: StagedDb, ctx: ReadContext) -> int:
    """COMMUNICATION_OP -> ops rows (as the text twin writes them: ids NULL, block dim 0)."""
    t = "COMMUNICATION_OP"
    if not db.has(t, "opName", "startNs", "endNs"):
        return 0
    task_type = COMM_TASK_TYPE.get(ctx.source.producer, "COMMUNICATION")
    select = ", ".join(
        [
            device_of(db, "o", t),
            f"{db.text('o', t, 'opName')} AS op_name",
            _optional(db, "o", t, "op_type", "opType", how="text"),
            f"'{task_type}' AS task_type",
            *window("o"),
            _optional(db, "o", t, "wait_us", "waitNs", how="ns_to_us"),
            "0 AS block_dim",
        ]
    )
    return insert_rows(db.con, "ops", ctx.run_id, f'SELECT {select} FROM "{db.name(t)}" o', order="o.rowid")


def load_device_tasks(db: StagedDb, ctx: ReadContext) -> int:
    """Every TASK row -> timeline 'device_task' (named by its op, its comm task, or its task type)."""
    if not db.has("TASK", "startNs", "endNs"):
        return 0
    joins, names = [], []
    for alias, table in (("c", "COMPUTE_TASK_INFO"), ("m", "COMMUNICATION_TASK_INFO")):
        if db.has(table, "globalTaskId", "name") and db.has("TASK", "globalTaskId"):
            joins.append(f'LEFT JOIN "{db.name(table)}" {alias} ON {alias}.globalTaskId = t.globalTaskId')
            names.append(db.text(alias, table, "name"))
    task_type = db.text("t", "TASK", "taskType") if db.has("TASK", "taskType") else "NULL"
    stream = int_or_null('t."streamId"', "INTEGER") if db.has("TASK", "streamId") else "NULL"
    select = ", ".join(
        [
            _optional(db, "t", "TASK", "device_id", "deviceId"),
            "'device_task' AS kind",
            "'Ascend Hardware' AS process",
            f"{stream} AS thread_id",
            f"'Stream ' || {stream} AS thread_name",
            f"coalesce({', '.join([*names, task_type])}) AS name",
            f"{stream} AS stream_id",
            _optional(db, "t", "TASK", "task_id", "taskId", how="bigint"),
            f"{task_type} AS task_type",
            _optional(db, "t", "TASK", "connection_id", "connectionId", how="bigint"),
            *window("t"),
        ]
    )
    return insert_rows(
        db.con,
        "timeline",
        ctx.run_id,
        f'SELECT {select} FROM "{db.name("TASK")}" t {" ".join(joins)}',
        order="t.rowid",
    )
