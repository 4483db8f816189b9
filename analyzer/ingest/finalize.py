"""After a run's files are read: derive what needs several tables, split devices, and write its runs row."""

from __future__ import annotations

import duckdb

from analyzer.ingest.metadata.fingerprint import source_fingerprint
from analyzer.ingest.metadata.run_metadata import RunMetadata
from analyzer.ingest.model import ReadContext
from analyzer.ingest.pipe_columns import derive_pipeline
from analyzer.ingest.readers import DEVICE_TASK_KINDS
from analyzer.ingest.schema import TABLES
from analyzer.ingest.sql_values import IN_RUNS
from analyzer.ingest.step_windows import merge_step_markers
from analyzer.ingest.timeline import timeline_store
from analyzer.row_inserts import insert_values

# Which collection setting collects which metric family (said in runs.not_collected and in skips).
SETTINGS = {
    "pmu": "PMU pipeline metrics (torch_npu: experimental_config profiler_level=Level1 or Level2 with "
    "aic_metrics=AiCMetrics.PipeUtilization; msprof: --task-time=l1 --aic-mode=task-based "
    "--aic-metrics=PipeUtilization)",
    "op_types": "operator types (torch_npu: profiler_level=Level1; msprof: --task-time=l1)",
    "steps": "step boundaries (torch_npu: a schedule with active steps and prof.step() each step)",
    "communication": "communication analysis (multi-card run with profiler_level=Level1 or Level2)",
    "hbm": "HBM bandwidth (torch_npu: sys_hardware_mem_freq / Level with memory; msprof: --sys-hardware-mem=on)",
    "timeline": "timeline (torch_npu: export_type text; msprof: --export=on)",
    "aicore_freq": "AI Core frequency counter (torch_npu: the timeline's 'AI Core Freq' track, Level1 or Level2 "
    "with export_type text; msprof: --sys-hardware-mem=on with --export=on)",
    "memory": "memory usage over time (torch_npu: profile_memory=True, memory_record.csv / MEMORY_RECORD; "
    "msprof: --sys-hardware-mem=on)",
    "chip": "the chip's AI Core count (msprof: device_N/info.json; torch_npu DB exports: NPU_INFO; "
    "torch_npu text exports do not record it)",
}


def _count(con: duckdb.DuckDBPyConnection, table: str, run_id: str, where: str = "TRUE") -> int:
    return con.execute(f"SELECT count(*) FROM {table} WHERE run_id = ? AND {where}", [run_id]).fetchall()[0][0]


def _ops_from_timeline(con: duckdb.DuckDBPyConnection, ctx: ReadContext) -> None:
    """With no usable op_summary / kernel_details, device tasks of the timeline are the ops (no types, no PMU).

    Op rows without any start time or duration (e.g. a column of N/A, or ns written as us) are
    replaced by the timeline's tasks rather than leaving the run with nothing to time.
    """
    timed = _count(con, "ops", ctx.run_id, "start_ns IS NOT NULL AND dur_us IS NOT NULL")
    if timed or not _count(con, "timeline", ctx.run_id, "kind = 'device_task'"):
        return
    untimed = _count(con, "ops", ctx.run_id)
    if untimed:
        con.execute(
            "DELETE FROM ops WHERE run_id = $r",
            {"r": ctx.run_id},
        )
        ctx.report(
            "",
            "",
            "warning",
            f"none of the {untimed} kernel_details / op_summary rows has a usable start "
            "time and duration: ops come from the timeline's device tasks instead",
            "see the problems reported on that file",
        )
    con.execute(
        "INSERT INTO ops BY NAME SELECT run_id, device_id, stream_id, task_id, name AS op_name, task_type, "
        "start_ns, dur_us, end_ns FROM timeline WHERE run_id = $run_id AND kind = 'device_task'",
        {"run_id": ctx.run_id},
    )
    if not untimed:
        ctx.report(
            "",
            "",
            "info",
            "no kernel_details / op_summary: ops come from the timeline's device tasks "
            "(no operator types, shapes or PMU metrics)",
            SETTINGS["op_types"],
        )


def device_tasks_from_one_file(ctx: ReadContext) -> bool:
    """True when a single file gave the run's device tasks (a torch_npu trace_view.json), so that no
    task was written twice."""
    return sum(len(ctx.source.files.get(kind, ())) for kind in DEVICE_TASK_KINDS) <= 1


# ops rows without a step (o) and the step (s) whose window holds their start.
STEP_OF_OP = (
    "o.step_id IS NULL AND s.start_ns IS NOT NULL AND o.start_ns >= s.start_ns "
    "AND o.start_ns < s.end_ns AND (s.device_id IS NULL OR o.device_id IS NULL "
    "OR s.device_id = o.device_id)"
)


def _assign_steps(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Give ops without a step the step whose window holds their start."""
    con.execute(
        f"UPDATE ops AS o SET step_id = s.step_id FROM steps s WHERE o.run_id = $r AND s.run_id = $r AND {STEP_OF_OP}",
        {"r": run_id},
    )


# The counts over a run's ops rows that tell which AI Core metric set was collected (``aic_metrics_of``), in
# the order of AIC_SETS.
AIC_COUNTS = (
    "count(aic_mte2_ratio) + count(aiv_vec_ratio) + count(aic_mac_ratio), "
    "count(*) FILTER (WHERE list_contains(map_keys(extra_metrics), 'aic_mac_fp16_ratio')), "
    "count(*) FILTER (WHERE list_contains(map_keys(extra_metrics), 'aic_l0a_read_bw_gb_per_s')), "
    "count(*) FILTER (WHERE list_contains(map_keys(extra_metrics), 'aic_main_mem_read_bw_gb_per_s') "
    "OR list_contains(map_keys(extra_metrics), 'main_mem_read_bw_gb_per_s'))"
)
AIC_SETS = ("PipeUtilization", "ArithmeticUtilization", "MemoryL0", "Memory")
# The other metric sets, each named by a column of its own on either chip family (aic_/aiv_ prefixed or not;
# formats.md): MemoryUB's UB bandwidth per unit (Memory's UB bandwidth names none), the vector bank conflict
# ratios, the L2 cache hits. They are looked for among the distinct keys of a run's extra metrics, only when
# none of AIC_SETS holds values: a test of every row's keys would run a regex per key of every task of every run.
KEY_SETS = (
    ("MemoryUB", "regexp_matches(k, '^(aic_|aiv_)?ub_(read|write)_bw_(mte|vector|scalar)_')"),
    ("ResourceConflictRatio", "k LIKE '%vec_bank%cflt_ratio'"),
    ("L2Cache", "regexp_matches(k, '(read|write)_cache_hit$|_local_l2_hit$')"),
)


def _infer_aic_metrics(con: duckdb.DuckDBPyConnection, run_id: str) -> str | None:
    counts = con.execute(f"SELECT {AIC_COUNTS} FROM ops WHERE run_id = ?", [run_id]).fetchall()[0]
    return aic_metrics_of(counts) or key_sets(con, [run_id]).get(run_id)


def aic_metrics_of(counts: tuple) -> str | None:
    """The metric set of AIC_SETS whose columns hold values, from the AIC_COUNTS of a run."""
    for count, name in zip(counts, AIC_SETS, strict=True):
        if count:
            return name
    return None


def key_sets(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, str]:
    """The metric set of KEY_SETS (the first) whose columns the ops of each of ``run_ids`` carry, by run."""
    if not run_ids:
        return {}
    hits = ", ".join(f"bool_or({test})" for _, test in KEY_SETS)
    rows = con.execute(
        f"SELECT run_id, {hits} FROM (SELECT DISTINCT run_id, unnest(map_keys(extra_metrics)) AS k FROM ops "
        f"WHERE {IN_RUNS} AND extra_metrics IS NOT NULL) GROUP BY run_id",
        {"runs": run_ids},
    ).fetchall()
    return {r[0]: next(name for (name, _), hit in zip(KEY_SETS, r[1:], strict=True) if hit) for r in rows if any(r[1:])}


# What a run holds, each asked as EXISTS (the scan stops at the first row), all in one query.
PRESENCE = {
    "pmu": ("ops", "core_time_us IS NOT NULL"),
    "pipe_utilization": ("ops", "mte_time_us IS NOT NULL"),
    "ops": ("ops", "TRUE"),
    "op_types": ("ops", "op_type IS NOT NULL"),
    "steps": ("steps", "TRUE"),
    "hbm": ("counters", "counter LIKE 'hbm_%'"),
    "timeline": ("timeline", "TRUE"),
    "core_samples": ("core_utilization", "TRUE"),  # only the sample-based AI Core mode writes them
}


def _presence(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, bool]:
    items = ", ".join(
        f"EXISTS (SELECT 1 FROM {table} WHERE run_id = $r AND {where})" for table, where in PRESENCE.values()
    )
    row = con.execute(f"SELECT {items}", {"r": run_id}).fetchall()[0]
    return dict(zip(PRESENCE, row, strict=True))


def _not_collected(has: dict[str, bool]) -> list[str]:
    missing = []
    if not has["pmu"]:
        missing.append(f"pmu: {SETTINGS['pmu']}")
    elif not has["pipe_utilization"]:
        missing.append(f"pipe_utilization: {SETTINGS['pmu']}")
    if has["ops"] and not has["op_types"]:
        missing.append(f"op_types: {SETTINGS['op_types']}")
    missing += [f"{key}: {SETTINGS[key]}" for key in ("steps", "hbm", "timeline") if not has[key]]
    return missing


# The tables whose rows a run of several devices splits into one run per device (those with a device_id).
DEVICE_TABLES = tuple(
    name
    for name, table in TABLES.items()
    if name not in ("runs", "ingest_problems") and any(c.name == "device_id" for c in table.columns)
)


_DEVICE_MARK = "/dev"  # between a run's id and the device number of one device's part of it


def device_run_id(run_id: str, device: int) -> str:
    """The run id of one device's part of a run of several devices."""
    return f"{run_id}{_DEVICE_MARK}{device}"


def device_run_id_sql(run_sql: str, device_sql: str) -> str:
    """``device_run_id`` in SQL, of the SQL expressions of a run id and a device."""
    return f"{run_sql} || '{_DEVICE_MARK}' || {device_sql}"


def device_part_sql(run_sql: str, parent_sql: str) -> str:
    """SQL true when the run id ``run_sql`` is one device's part (``device_run_id``) of the run ``parent_sql``.
    A prefix test, not LIKE: a run id may hold '_' or '%', which LIKE would read as wildcards."""
    return f"starts_with({run_sql}, {parent_sql} || '{_DEVICE_MARK}')"


def keep_track_devices(con: duckdb.DuckDBPyConnection, runs: list[str]) -> None:
    """A counter sample or a timeline row keeps the device its track names (timeline_events.track_device_sql)
    only when the run's tasks ran on that device, before the split gives it to that device's run alone: a track
    whose pid is written another way names no device, and its rows stay the whole run's, every device's."""
    for table in ("counters", "timeline"):
        con.execute(
            f"UPDATE {table} AS c SET device_id = NULL WHERE c.{IN_RUNS} AND c.device_id IS NOT NULL "
            "AND NOT EXISTS (SELECT 1 FROM ops AS o WHERE o.run_id = c.run_id AND o.device_id = c.device_id)",
            {"runs": runs},
        )


def _split_devices(con: duckdb.DuckDBPyConnection, run_id: str) -> list[tuple[str, int | None]]:
    """One run per device: with several devices, rows get run ids '<id>/dev<N>' (device_run_id)."""
    devices = devices_of(con, [run_id]).get(run_id, [])
    if len(devices) <= 1:
        return [(run_id, devices[0] if devices else None)]
    split_devices(con, {run_id: devices})
    return [(device_run_id(run_id, d), d) for d in devices]


def devices_of(con: duckdb.DuckDBPyConnection, runs: list[str]) -> dict[str, list[int]]:
    """The device ids of each run's ops rows, in order (a run of several is split into one run per device)."""
    rows = con.execute(
        f"SELECT run_id, list(DISTINCT device_id ORDER BY device_id) FILTER (WHERE device_id IS NOT NULL) "
        f"FROM ops WHERE {IN_RUNS} GROUP BY run_id",
        {"runs": runs},
    ).fetchall()
    return {r[0]: r[1] or [] for r in rows}


_IN_SPLIT = "run_id IN (SELECT run_id FROM _split_devices)"


def split_devices(con: duckdb.DuckDBPyConnection, devices: dict[str, list[int]]) -> None:
    """Split every run of ``devices`` (run id: its devices) holding several, a statement per table for all of
    them: rows naming a device go to that device's run ('<id>/dev<N>', device_run_id), rows naming none (framework
    ops, a track whose pid names none: keep_track_devices) to every device's run, after its own rows."""
    pairs = [(run_id, device) for run_id, found in devices.items() if len(found) > 1 for device in found]
    if not pairs:
        return
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _split_devices AS "
        "SELECT unnest($runs::VARCHAR[]) AS run_id, unnest($devices::INTEGER[]) AS device_id",
        {"runs": [p[0] for p in pairs], "devices": [p[1] for p in pairs]},
    )
    try:
        for name in DEVICE_TABLES:
            _split_table(con, name)
    finally:
        con.execute("DROP TABLE IF EXISTS _split_devices")


def _split_table(con: duckdb.DuckDBPyConnection, name: str) -> None:
    as_device = device_run_id_sql("run_id", "device_id")
    con.execute(f"UPDATE {name} SET run_id = {as_device} WHERE {_IN_SPLIT} AND device_id IS NOT NULL")
    # Each device's copies in the rows' order: a join gives its rows in an order of DuckDB's choosing.
    con.execute(
        f"INSERT INTO {name} BY NAME SELECT t.* REPLACE ({device_run_id_sql('d.run_id', 'd.device_id')} AS run_id) "
        f"FROM {name} t JOIN _split_devices d ON t.run_id = d.run_id ORDER BY t.rowid, d.device_id"
    )
    con.execute(f"DELETE FROM {name} WHERE {_IN_SPLIT}")


def apply_facts(meta: RunMetadata, ctx: ReadContext) -> None:
    """Fill metadata fields the metadata files left unknown with what data files recorded (ctx.facts)."""
    for key, value in ctx.facts.items():
        if key in RunMetadata.__dataclass_fields__ and key != "extra":
            if getattr(meta, key) is None:
                setattr(meta, key, value)
        else:
            meta.extra.setdefault(key, str(value))


def run_values(ctx: ReadContext, meta: RunMetadata, has: dict[str, bool], aic_metrics: str | None) -> dict[str, object]:
    """The runs row of a run apart from its run id, device and the counts over its ops (``_presence``
    answers in ``has``)."""
    src = ctx.source
    return {
        "source_path": src.root.name if src.rel_path == "." else src.rel_path,  # '.' says nothing on a card
        "producer": src.producer,
        "export_type": src.export_type,
        "layout": src.layout,
        "rank_id": meta.rank_id,
        "cann_version": meta.cann_version,
        "torch_npu_version": meta.torch_npu_version,
        "chip": meta.chip,
        "ai_core_count": meta.ai_core_count,
        "profiler_level": meta.profiler_level,
        "aic_metrics": aic_metrics,
        "aic_mode": meta.aic_mode or ("sample-based" if has["core_samples"] else None),
        "pmu_collected": has["pmu"],
        "not_collected": _not_collected(has),
        "files": sorted(ctx.files_read),
        "model_name": meta.model_name,
        "batch_size": meta.batch_size,
        "fingerprint": source_fingerprint(ctx.source),
    }


def finalize_run(con: duckdb.DuckDBPyConnection, ctx: ReadContext, meta: RunMetadata) -> None:
    """Derive cross-table columns, split devices and insert the runs and ingest_problems rows."""
    run_id = ctx.run_id
    apply_facts(meta, ctx)
    if not device_tasks_from_one_file(ctx):
        timeline_store.delete_duplicate_device_tasks(con, run_id)  # a full scan, for nothing on a single file
    _ops_from_timeline(con, ctx)
    merge_step_markers(con, run_id)
    derive_pipeline(con, run_id)
    _assign_steps(con, run_id)
    has = _presence(con, run_id)
    values = run_values(ctx, meta, has, meta.aic_metrics or _infer_aic_metrics(con, run_id))
    given = ", ".join(f"${name} AS {name}" for name in values)
    keep_track_devices(con, [run_id])
    for rid, device in _split_devices(con, run_id):
        con.execute(
            f"INSERT INTO runs BY NAME SELECT $run_id AS run_id, $device_id AS device_id, {given}, "
            "count(*) AS task_count, min(start_ns) AS start_ns, max(end_ns) AS end_ns FROM ops WHERE run_id = $run_id",
            {"run_id": rid, "device_id": device, **values},
        )
    rows = [(run_id, p.file, p.location, p.severity, p.problem, p.hint) for p in ctx.problems]
    insert_values(con, "ingest_problems", rows)
