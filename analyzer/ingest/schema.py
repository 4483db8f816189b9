"""The normalized table model: every table, column, DuckDB type, unit and meaning, in one place.

Readers fill these tables (``INSERT INTO <table> BY NAME``), rules query them, reports read
them. Raw export headers never appear outside the ingest module that maps them. Column names
are snake_case and carry their unit (``_ns``, ``_us``, ``_ms``, ``_mb``, ``_ratio``, ``_pct``,
``_count``); ``_ratio`` is a 0-1 fraction and ``_pct`` is 0-100. Times that are instants are
exact ``BIGINT`` nanoseconds since the Unix epoch, as the export wrote them; durations are
``DOUBLE`` microseconds. ``NULL`` means "not collected / not applicable", never zero.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    """One column of a normalized table."""

    name: str
    type: str  # DuckDB type
    unit: str  # "" when dimensionless or textual
    doc: str


@dataclass(frozen=True)
class Table:
    """One normalized table."""

    name: str
    doc: str
    columns: tuple[Column, ...]

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def ddl(self, name: str | None = None) -> str:
        """CREATE TABLE statement for this table (under ``name`` when given)."""
        cols = ",\n".join(f"    {c.name} {c.type}" for c in self.columns)
        return f"CREATE TABLE IF NOT EXISTS {name or self.name} (\n{cols}\n)"


def _c(name: str, type_: str, unit: str, doc: str) -> Column:
    return Column(name, type_, unit, doc)


_RUN_ID = _c(
    "run_id", "VARCHAR", "", "Stable id of the run (export folder name, plus device when one export holds several)."
)
_DEVICE = _c("device_id", "INTEGER", "", "NPU device id; NULL when the export does not say.")
_STEP = _c("step_id", "BIGINT", "", "Training step / iteration id; NULL when no step schedule was used.")

# The PMU pipeline columns of op_summary / kernel_details, normalized across chips and versions.
# On split-core chips (Atlas A2/A3) the export prefixes them aic_ (cube core) and aiv_ (vector
# core); on older chips (910/310P) they are unprefixed and map to the aic_ columns, except vec_*
# which maps to aiv_vec_*.
_PIPE_COLUMNS = (
    _c("aicore_time_us", "DOUBLE", "us", "Time the task ran on AI Cube cores (raw aicore_time(us) / aic_total_time)."),
    _c("aic_total_cycles", "BIGINT", "cycles", "Cube-core cycles of the task."),
    _c("aic_mac_time_us", "DOUBLE", "us", "Cube (MAC) pipe busy time."),
    _c("aic_mac_ratio", "DOUBLE", "ratio", "Cube (MAC) pipe busy share of cube-core cycles."),
    _c("aic_scalar_time_us", "DOUBLE", "us", "Scalar pipe busy time on cube cores."),
    _c("aic_scalar_ratio", "DOUBLE", "ratio", "Scalar pipe share on cube cores."),
    _c("aic_mte1_time_us", "DOUBLE", "us", "MTE1 (L1 -> L0A/L0B) busy time on cube cores."),
    _c("aic_mte1_ratio", "DOUBLE", "ratio", "MTE1 share on cube cores."),
    _c("aic_mte2_time_us", "DOUBLE", "us", "MTE2 (GM -> L1) busy time on cube cores."),
    _c("aic_mte2_ratio", "DOUBLE", "ratio", "MTE2 share on cube cores."),
    _c("aic_mte3_time_us", "DOUBLE", "us", "MTE3 busy time on cube cores (older chips only)."),
    _c("aic_mte3_ratio", "DOUBLE", "ratio", "MTE3 share on cube cores (older chips only)."),
    _c("aic_fixpipe_time_us", "DOUBLE", "us", "Fixpipe (L0C -> GM/L1) busy time."),
    _c("aic_fixpipe_ratio", "DOUBLE", "ratio", "Fixpipe share on cube cores."),
    _c("aic_icache_miss_rate", "DOUBLE", "ratio", "Instruction-cache miss rate on cube cores."),
    _c("aiv_time_us", "DOUBLE", "us", "Time the task ran on AI Vector cores (raw aiv_time(us) / aiv_total_time)."),
    _c("aiv_total_cycles", "BIGINT", "cycles", "Vector-core cycles of the task."),
    _c("aiv_vec_time_us", "DOUBLE", "us", "Vector pipe busy time."),
    _c("aiv_vec_ratio", "DOUBLE", "ratio", "Vector pipe share of vector-core cycles."),
    _c("aiv_scalar_time_us", "DOUBLE", "us", "Scalar pipe busy time on vector cores."),
    _c("aiv_scalar_ratio", "DOUBLE", "ratio", "Scalar pipe share on vector cores."),
    _c("aiv_mte2_time_us", "DOUBLE", "us", "MTE2 (GM -> UB) busy time on vector cores."),
    _c("aiv_mte2_ratio", "DOUBLE", "ratio", "MTE2 share on vector cores."),
    _c("aiv_mte3_time_us", "DOUBLE", "us", "MTE3 (UB -> GM) busy time on vector cores."),
    _c("aiv_mte3_ratio", "DOUBLE", "ratio", "MTE3 share on vector cores."),
    _c("aiv_icache_miss_rate", "DOUBLE", "ratio", "Instruction-cache miss rate on vector cores."),
    _c("cube_utilization_pct", "DOUBLE", "%", "Cube utilisation: total cycles / (freq x cores x duration), 0-100."),
    _c("memory_bound_ratio", "DOUBLE", "ratio", "msprof's memory_bound: mte2_ratio / max(mac_ratio, vec_ratio)."),
)

# Derived once at ingest so that every rule shares one definition.
_DERIVED_PIPE_COLUMNS = (
    _c(
        "core_time_us",
        "DOUBLE",
        "us",
        "Core busy time of the task: aicore_time_us + aiv_time_us (NULL when no PMU data was collected).",
    ),
    _c(
        "mte_time_us",
        "DOUBLE",
        "us",
        "Memory-transfer time: per core kind, the busiest MTE pipe (max of MTE1/MTE2/MTE3 time, since "
        "the pipes run concurrently), summed over cube and vector cores. Same definition for AI_CORE, "
        "AI_VECTOR_CORE and MIX tasks.",
    ),
    _c("cube_time_us", "DOUBLE", "us", "Cube (MAC) pipe time, aic_mac_time_us."),
    _c("vector_time_us", "DOUBLE", "us", "Vector pipe time, aiv_vec_time_us."),
    _c("scalar_time_us", "DOUBLE", "us", "Scalar pipe time, summed over cube and vector cores."),
    _c("mte_ratio", "DOUBLE", "ratio", "mte_time_us / core_time_us: the task's MTE share of core time."),
    _c(
        "pipeline_bound",
        "VARCHAR",
        "",
        "Pipe with the largest time among cube, vector, scalar and mte ('cube', 'vector', 'scalar', "
        "'mte'); NULL without PMU data.",
    ),
)

TABLES: dict[str, Table] = {}


def _table(name: str, doc: str, *columns: Column) -> None:
    TABLES[name] = Table(name, doc, tuple(columns))


_table(
    "runs",
    "One row per run: what wrote it, on what, with which collection settings, and what was found.",
    _RUN_ID,
    _c("source_path", "VARCHAR", "", "Export folder, relative to the path given; its name when that is the export."),
    _c("producer", "VARCHAR", "", "'torch_npu', 'mindspore', 'msprof' or 'unknown'."),
    _c("export_type", "VARCHAR", "", "'text' (CSV/JSON) or 'db' (SQLite)."),
    _c(
        "layout",
        "VARCHAR",
        "",
        "Folder layout: 'ascend_profiler_output', 'mindstudio_profiler_output', 'msprof_db', 'bare_csv'.",
    ),
    _DEVICE,
    _c("rank_id", "INTEGER", "", "Distributed rank, from profiler_info_{rank}.json."),
    _c("cann_version", "VARCHAR", "", "CANN version where the export records it."),
    _c("torch_npu_version", "VARCHAR", "", "torch_npu version where the export records it."),
    _c("chip", "VARCHAR", "", "Chip name (NPU_INFO / info.json), e.g. 'Ascend910B'."),
    _c("ai_core_count", "INTEGER", "", "AI Core count of the chip where known."),
    _c("profiler_level", "VARCHAR", "", "torch_npu profiler level: 'Level0', 'Level1', 'Level2', 'Level_none'."),
    _c(
        "aic_metrics",
        "VARCHAR",
        "",
        "AI Core metric set, normalized: 'PipeUtilization', 'ArithmeticUtilization', 'Memory', 'MemoryL0', "
        "'MemoryUB', 'ResourceConflictRatio', 'L2Cache', 'MemoryAccess'; NULL when none.",
    ),
    _c("aic_mode", "VARCHAR", "", "'task-based' or 'sample-based'."),
    _c("pmu_collected", "BOOLEAN", "", "Whether per-task PMU pipeline columns are present."),
    _c(
        "not_collected",
        "VARCHAR[]",
        "",
        "Metric families absent from this export, each as 'family: setting that collects it'.",
    ),
    _c("files", "VARCHAR[]", "", "Files read for this run, relative to the export folder."),
    _c("task_count", "BIGINT", "count", "Rows in ops for this run."),
    _c("start_ns", "BIGINT", "ns", "First device task start."),
    _c("end_ns", "BIGINT", "ns", "Last device task end."),
    _c("model_name", "VARCHAR", "", "Model name where known (metadata or user label)."),
    _c("batch_size", "INTEGER", "", "Batch size where known (metadata or user label)."),
    _c("fingerprint", "VARCHAR", "", "Content fingerprint of the export's files (for incremental batch runs)."),
)

_table(
    "ops",
    "One row per device task of a compute or communication operator (op_summary / kernel_details / DB TASK).",
    _RUN_ID,
    _DEVICE,
    _STEP,
    _c("model_id", "BIGINT", "", "Model id; NULL for the 4294967295 'no model' sentinel."),
    _c("stream_id", "INTEGER", "", "Stream id; NULL for communication rows."),
    _c("task_id", "BIGINT", "", "Task id; NULL for communication rows."),
    _c("context_id", "BIGINT", "", "Sub-task (FFTS+/MIX) context id."),
    _c("op_name", "VARCHAR", "", "Operator instance name."),
    _c("op_type", "VARCHAR", "", "Operator type (e.g. 'MatMulV2'); NULL when not recorded."),
    _c(
        "task_type",
        "VARCHAR",
        "",
        "Core / task type: AI_CORE, AI_VECTOR_CORE, AI_CPU, MIX_AIC, MIX_AIV, COMMUNICATION, ...",
    ),
    _c("op_state", "VARCHAR", "", "'dynamic' or 'static'; NULL when not recorded."),
    _c("start_ns", "BIGINT", "ns", "Task start, exact (the export's decimal microseconds x 1000)."),
    _c("dur_us", "DOUBLE", "us", "Task duration."),
    _c("end_ns", "BIGINT", "ns", "start_ns + dur_us x 1000, rounded."),
    _c("wait_us", "DOUBLE", "us", "Idle time before the task on its device, as written by the export."),
    _c("block_dim", "INTEGER", "count", "Cores used (Block Dim / Block Num)."),
    _c("mix_block_dim", "INTEGER", "count", "Secondary-core block count of MIX tasks."),
    _c("hf32_eligible", "BOOLEAN", "", "HF32 Eligible flag."),
    _c("input_shapes", "VARCHAR", "", "Input shapes, ';' between tensors, ',' between dims, literal quotes removed."),
    _c("input_dtypes", "VARCHAR", "", "Input data types, ';'-separated."),
    _c("input_formats", "VARCHAR", "", "Input formats, ';'-separated."),
    _c("output_shapes", "VARCHAR", "", "Output shapes, as input_shapes."),
    _c("output_dtypes", "VARCHAR", "", "Output data types."),
    _c("output_formats", "VARCHAR", "", "Output formats."),
    *_PIPE_COLUMNS,
    *_DERIVED_PIPE_COLUMNS,
    _c(
        "extra_metrics",
        "MAP(VARCHAR, DOUBLE)",
        "",
        "Every other PMU column (ArithmeticUtilization, Memory, MemoryL0, L2Cache, ...), keyed by its "
        "normalized name with the unit in it (e.g. 'aic_l0a_read_bw_gb_per_s', 'aic_cube_fops').",
    ),
)

_table(
    "op_stats",
    "Per operator type and core type totals (op_statistic), as the export wrote them.",
    _RUN_ID,
    _DEVICE,
    _c("model_name", "VARCHAR", "", "Model name in graph exports."),
    _c("op_type", "VARCHAR", "", "Operator type."),
    _c("core_type", "VARCHAR", "", "Core type (AI_CORE, AI_VECTOR_CORE, AI_CPU, MIX_AIC, ...)."),
    _c("call_count", "BIGINT", "count", "Launches."),
    _c("total_time_us", "DOUBLE", "us", "Summed duration."),
    _c("min_time_us", "DOUBLE", "us", "Shortest launch."),
    _c("avg_time_us", "DOUBLE", "us", "Mean launch."),
    _c("max_time_us", "DOUBLE", "us", "Longest launch."),
    _c("time_share_pct", "DOUBLE", "%", "Share of all operator time of the device, 0-100."),
)

_table(
    "api_stats",
    "Host API statistics (api_statistic).",
    _RUN_ID,
    _DEVICE,
    _c("is_host", "BOOLEAN", "", "True for host-side rows (Device_id 'host' or no device column)."),
    _c("level", "VARCHAR", "", "API level: acl, runtime, node, model, hccl, communication, ..."),
    _c("api_name", "VARCHAR", "", "API name."),
    _c("total_time_us", "DOUBLE", "us", "Summed time."),
    _c("call_count", "BIGINT", "count", "Calls."),
    _c("avg_time_us", "DOUBLE", "us", "Mean time."),
    _c("min_time_us", "DOUBLE", "us", "Shortest call."),
    _c("max_time_us", "DOUBLE", "us", "Longest call."),
    _c("variance_us2", "DOUBLE", "us^2", "Variance of the call time."),
)

_table(
    "steps",
    "One row per step (iteration) and device: its window and its time decomposition.",
    _RUN_ID,
    _DEVICE,
    _STEP,
    _c("start_ns", "BIGINT", "ns", "Step start (ProfilerStep event, DB STEP_TIME, or FP start)."),
    _c("end_ns", "BIGINT", "ns", "Step end."),
    _c("computing_us", "DOUBLE", "us", "Time some compute task ran (Overlap Analysis 'Computing')."),
    _c("comm_not_overlapped_us", "DOUBLE", "us", "Communication time not hidden behind computation."),
    _c("overlapped_us", "DOUBLE", "us", "Communication time hidden behind computation."),
    _c("comm_us", "DOUBLE", "us", "All communication time."),
    _c("free_us", "DOUBLE", "us", "Time with neither compute nor communication on the device."),
    _c("stage_us", "DOUBLE", "us", "Step length on the device (torch_npu 'Stage')."),
    _c("bubble_us", "DOUBLE", "us", "Pipeline-parallel bubble time."),
    _c("comm_not_overlapped_excl_receive_us", "DOUBLE", "us", "Not-overlapped communication excluding receive."),
    _c("preparing_us", "DOUBLE", "us", "Time from step start to the first device task."),
    _c("iteration_time_us", "DOUBLE", "us", "msprof step_trace Iteration Time."),
    _c("fp_bp_time_us", "DOUBLE", "us", "msprof step_trace FP to BP Time."),
    _c("data_aug_bound_us", "DOUBLE", "us", "msprof step_trace Data Aug Bound."),
    _c("source", "VARCHAR", "", "Where the row came from: 'step_trace_time', 'step_trace', 'db', 'timeline'."),
)

_table(
    "timeline",
    "Timeline events: host API calls, framework ops, device tasks, communication, overlap-analysis segments and flows. "
    "`npu-triage diagnose` without `--db` leaves out the 'flow' and "
    "'overlap' rows when no rule reads this table (no built-in rule does; rule_engine/timeline_use.py).",
    _RUN_ID,
    _DEVICE,
    _c(
        "kind",
        "VARCHAR",
        "",
        "'host_api' (CANN), 'framework_op' (Python / PYTORCH_API), 'device_task' (Ascend Hardware / TASK), "
        "'communication' (HCCL), 'overlap' (Overlap Analysis), 'flow' (s/f arrows), 'step_marker', 'other'.",
    ),
    _c("process", "VARCHAR", "", "Track group (the timeline's process_name)."),
    _c("thread_id", "BIGINT", "", "Thread id, stream id or plane id, by process."),
    _c("thread_name", "VARCHAR", "", "Thread / track name."),
    _c("name", "VARCHAR", "", "Event name (API, op, task or segment)."),
    _c("category", "VARCHAR", "", "Event category (cat; for flows e.g. 'HostToDevice', 'async_npu')."),
    _c("start_ns", "BIGINT", "ns", "Event start, exact."),
    _c("dur_us", "DOUBLE", "us", "Duration; NULL for flows and instants."),
    _c("end_ns", "BIGINT", "ns", "start_ns + dur_us x 1000, rounded."),
    _c("stream_id", "INTEGER", "", "Device stream of a device task or HCCL task."),
    _c("task_id", "BIGINT", "", "Device task id."),
    _c("task_type", "VARCHAR", "", "Device task type (AI_CORE, SDMA, Notify Wait, ...), or API level for host APIs."),
    _c("connection_id", "BIGINT", "", "Host-device correlation id."),
    _c("flow_id", "VARCHAR", "", "Flow id of an 's'/'f' event."),
    _c("flow_phase", "VARCHAR", "", "'s' (start) or 'f' (finish) for flows."),
)

_table(
    "counters",
    "Counter time series: HBM and DDR bandwidth, LLC, NPU memory, AI Core frequency and utilisation, ...",
    _RUN_ID,
    _DEVICE,
    _c(
        "counter",
        "VARCHAR",
        "",
        "Normalized counter: 'hbm_read', 'hbm_write', 'ddr_read', 'ddr_write', 'llc_read_throughput', "
        "'llc_write_throughput', 'llc_hit_rate', 'npu_mem_app', 'npu_mem_device', 'aicore_freq', "
        "'aicore_utilization', 'aivector_utilization', or 'other:<raw name>'.",
    ),
    _c(
        "instance",
        "VARCHAR",
        "",
        "Unit or memory kind the series belongs to (HBM id, 'DDR', 'HBM', core id, 'Average').",
    ),
    _c("ts_ns", "BIGINT", "ns", "Sample time."),
    _c("value", "DOUBLE", "see unit", "Sample value, in the row's unit."),
    _c(
        "unit",
        "VARCHAR",
        "",
        "Unit of value: 'MB/s' for bandwidth (DB bytes/s converted), 'KB' for memory, 'MHz', '%', 'ratio'.",
    ),
)

_table(
    "comm_ops",
    "Communication operators with their time breakdown (communication.json, COMMUNICATION_OP, analysis.db).",
    _RUN_ID,
    _DEVICE,
    _STEP,
    _c("op_name", "VARCHAR", "", "Communication op name (e.g. 'hcom_allReduce__586_0_1')."),
    _c("group_name", "VARCHAR", "", "Communication group (hash or name)."),
    _c("op_kind", "VARCHAR", "", "'collective' or 'p2p'."),
    _c("start_ns", "BIGINT", "ns", "Op start."),
    _c("elapse_us", "DOUBLE", "us", "Elapsed time (the json's ms converted)."),
    _c("transit_us", "DOUBLE", "us", "Time spent moving data."),
    _c("wait_us", "DOUBLE", "us", "Time waiting for peers."),
    _c("sync_us", "DOUBLE", "us", "Synchronization time."),
    _c("idle_us", "DOUBLE", "us", "Idle time."),
    _c("wait_ratio", "DOUBLE", "ratio", "wait / (wait + transit)."),
    _c("sync_ratio", "DOUBLE", "ratio", "sync / (sync + transit)."),
    _c("transit_size_mb", "DOUBLE", "MB", "Data moved, all transports."),
    _c("bandwidth_gb_per_s", "DOUBLE", "GB/s", "Achieved bandwidth of the main transport."),
    _c("transport", "VARCHAR", "", "Main transport (HCCS, RDMA, PCIE, SDMA, SIO)."),
)

_table(
    "memory_records",
    "Memory usage over time per component (memory_record, npu_module_mem, npu_mem), in MB.",
    _RUN_ID,
    _DEVICE,
    _c("source", "VARCHAR", "", "'memory_record', 'npu_module_mem' or 'npu_mem'."),
    _c("component", "VARCHAR", "", "Component (APP, PTA, GE, SLOG, ...) or npu_mem event."),
    _c("ts_ns", "BIGINT", "ns", "Sample time."),
    _c("allocated_mb", "DOUBLE", "MB", "Total allocated (KB exports converted)."),
    _c("reserved_mb", "DOUBLE", "MB", "Total reserved."),
    _c("active_mb", "DOUBLE", "MB", "Total active."),
    _c("hbm_mb", "DOUBLE", "MB", "HBM used (npu_mem)."),
    _c("ddr_mb", "DOUBLE", "MB", "DDR used (npu_mem)."),
)

_table(
    "op_memory",
    "Per-operator memory allocations (operator_memory / OP_MEMORY).",
    _RUN_ID,
    _DEVICE,
    _c("op_name", "VARCHAR", "", "Operator that allocated."),
    _c("size_kb", "DOUBLE", "KB", "Allocation size; negative when allocated before the window."),
    _c("alloc_ns", "BIGINT", "ns", "Allocation time."),
    _c("release_ns", "BIGINT", "ns", "Release time; NULL when not released in the window."),
    _c("duration_us", "DOUBLE", "us", "Lifetime."),
    _c("allocated_total_mb", "DOUBLE", "MB", "Total allocated at allocation time."),
    _c("reserved_total_mb", "DOUBLE", "MB", "Total reserved at allocation time."),
)

_table(
    "l2_cache",
    "Per-task L2 cache hit and victim rates (l2_cache.csv).",
    _RUN_ID,
    _DEVICE,
    _c("stream_id", "INTEGER", "", "Stream id."),
    _c("task_id", "BIGINT", "", "Task id."),
    _c("op_name", "VARCHAR", "", "Operator name."),
    _c("hit_ratio", "DOUBLE", "ratio", "L2 hit rate; often NULL on A2."),
    _c("victim_ratio", "DOUBLE", "ratio", "L2 victim rate."),
)

_table(
    "core_utilization",
    "Sample-based per-core metric averages (ai_core_utilization / ai_vector_core_utilization).",
    _RUN_ID,
    _DEVICE,
    _c("core_kind", "VARCHAR", "", "'aic' or 'aiv'."),
    _c("core_id", "VARCHAR", "", "'Core0', 'Core1', ... or 'Average'."),
    _c("metric", "VARCHAR", "", "Normalized metric name (e.g. 'mte2_ratio')."),
    _c("value", "DOUBLE", "see metric", "Metric value."),
)

_table(
    "bandwidth_summary",
    "Per-unit HBM / DDR bandwidth averages over the collection window (msprof hbm_*.csv / ddr_*.csv); "
    "not a time series (that is in counters).",
    _RUN_ID,
    _DEVICE,
    _c("memory", "VARCHAR", "", "'HBM' or 'DDR'."),
    _c("unit_id", "VARCHAR", "", "Memory unit id as written ('0', '1', ...) or 'Average' for the mean over units."),
    _c("read_mb_per_s", "DOUBLE", "MB/s", "Average read bandwidth."),
    _c("write_mb_per_s", "DOUBLE", "MB/s", "Average write bandwidth."),
)

_table(
    "ingest_problems",
    "Every problem met while reading: file, place, what is wrong, what to do. Nothing is dropped silently.",
    _RUN_ID,
    _c("file", "VARCHAR", "", "File, relative to the export folder."),
    _c("location", "VARCHAR", "", "Where in the file: 'line 12', 'byte 4096', 'table TASK', or ''."),
    _c(
        "severity",
        "VARCHAR",
        "",
        "'error' (data lost: a file, a table or the end of a truncated file could not be "
        "read; diagnose then exits 3), 'warning' (rows skipped or values doubtful), 'info'.",
    ),
    _c("problem", "VARCHAR", "", "What is wrong."),
    _c("hint", "VARCHAR", "", "What to do about it."),
)


# Job tables: one job = several rank exports of one distributed run (analyzer/job/). Their run_id is
# the job's id, so job rules bind $run_id like per-run rules; `rank` is the global rank.
_JOB_ID = _c("run_id", "VARCHAR", "", "Id of the job (the folder holding its rank exports).")
_RANK = _c("rank", "INTEGER", "", "Global rank (profiler_info rank_id, else distributed_args.rank).")

_table(
    "job_ranks",
    "One row per rank of a job: where its export is, what it holds, its place in the parallel layout.",
    _JOB_ID,
    _RANK,
    _c("rank_run_id", "VARCHAR", "", "The rank's own run id (its per-rank diagnosis folder)."),
    _c("source_path", "VARCHAR", "", "The rank's export folder, relative to the path the user gave."),
    _c(
        "rank_source", "VARCHAR", "", "Where the rank came from: 'profiler_info', 'distributed_args' or 'folder_order'."
    ),
    _c("world_size", "INTEGER", "", "Ranks in the job (distributed_args.world_size); NULL when not recorded."),
    _c("pp_stage", "INTEGER", "", "Pipeline stage: the rank's index in its pp group (metadata); NULL without one."),
    _c("has_kernels", "BOOLEAN", "", "The export holds per-task data (kernel_details/op_summary/timeline/DB)."),
    _c("has_step_trace", "BOOLEAN", "", "The export holds step_trace_time.csv."),
    _c("has_communication", "BOOLEAN", "", "The export holds communication.json."),
    _c("has_matrix", "BOOLEAN", "", "The export holds communication_matrix.json."),
    _c("files", "VARCHAR", "", "File kinds the export holds, comma-separated, sorted."),
    _c("collection_end_ns", "BIGINT", "ns", "End of the rank's collection (profiler_info end_info)."),
)

_table(
    "job_groups",
    "Communication and parallel groups of a job, one row per (group, member rank).",
    _JOB_ID,
    _c(
        "group_name",
        "VARCHAR",
        "",
        "Communication group id as communication.json writes it after '@' (a parallel_group_info key's hash).",
    ),
    _c("group_kind", "VARCHAR", "", "'dp', 'tp', 'pp', 'ep', 'cp', 'default', ... or 'unknown'."),
    _c(
        "source",
        "VARCHAR",
        "",
        "'metadata' (a parallel_group_info group), 'metadata members' (its ranks are exactly a metadata "
        "group's) or 'inferred' (the ranks whose files name it).",
    ),
    _RANK,
    _c("group_rank", "INTEGER", "", "The rank's index in the group (its local rank)."),
    _c("group_size", "INTEGER", "", "Ranks in the group (known members)."),
)

_table(
    "job_steps",
    "Per rank and step the step-trace decomposition (step_trace_time.csv of every rank), us.",
    _JOB_ID,
    _RANK,
    _STEP,
    _c("computing_us", "DOUBLE", "us", "Time computing."),
    _c("comm_not_overlapped_us", "DOUBLE", "us", "Communication not hidden by computation."),
    _c("overlapped_us", "DOUBLE", "us", "Communication overlapped with computation."),
    _c("comm_us", "DOUBLE", "us", "All communication time."),
    _c("free_us", "DOUBLE", "us", "Device idle: neither computing nor communicating (host-bound time)."),
    _c("stage_us", "DOUBLE", "us", "Step (stage) time of this rank."),
    _c("bubble_us", "DOUBLE", "us", "Pipeline bubble (receive waits of a pipeline stage)."),
    _c("comm_not_overlapped_excl_receive_us", "DOUBLE", "us", "Not-overlapped communication without receives."),
    _c("preparing_us", "DOUBLE", "us", "Time before the first device task of the step."),
)

_table(
    "job_comm_ops",
    "Per collective / p2p operation and rank its time breakdown, aligned across ranks by "
    "(step, group, op name) and numbered in order within the group.",
    _JOB_ID,
    _RANK,
    _STEP,
    _c("op_kind", "VARCHAR", "", "'collective' or 'p2p'."),
    _c("group_name", "VARCHAR", "", "Communication group hash."),
    _c("op_name", "VARCHAR", "", "Op name, the same on every rank of the group (e.g. 'hcom_allReduce__586_0_1')."),
    _c("op_seq", "INTEGER", "", "Order of the op among the rank's ops of this group and step (by start, then name)."),
    _c("op_rank_count", "INTEGER", "", "Ranks of the job holding this aligned op."),
    _c("start_ns", "BIGINT", "ns", "Start on this rank (its own clock)."),
    _c(
        "arrival_us",
        "DOUBLE",
        "us",
        "Start after the earliest rank's start of the same op (wall clocks; skew between hosts included).",
    ),
    _c("elapse_us", "DOUBLE", "us", "Elapsed time."),
    _c("transit_us", "DOUBLE", "us", "Time moving data."),
    _c("wait_us", "DOUBLE", "us", "Time waiting for the peers to arrive."),
    _c("sync_us", "DOUBLE", "us", "Synchronization time."),
    _c("idle_us", "DOUBLE", "us", "Idle time inside the op (elapse - transit - wait)."),
    _c("transit_size_mb", "DOUBLE", "MB", "Data moved, all links (SDMA not double counted)."),
    _c("bandwidth_gb_per_s", "DOUBLE", "GB/s", "Bandwidth of the main transport."),
    _c("transport", "VARCHAR", "", "Main transport (the link with most data)."),
)

_table(
    "job_comm_bandwidth",
    "Per operation, rank and transport the data moved and its bandwidth (communication.json).",
    _JOB_ID,
    _RANK,
    _STEP,
    _c("group_name", "VARCHAR", "", "Communication group hash."),
    _c("op_name", "VARCHAR", "", "Op name."),
    _c("transport", "VARCHAR", "", "'HCCS', 'RDMA', 'PCIE', 'SDMA' or 'SIO'."),
    _c("transit_size_mb", "DOUBLE", "MB", "Data moved on this transport."),
    _c("transit_us", "DOUBLE", "us", "Time moving it."),
    _c("bandwidth_gb_per_s", "DOUBLE", "GB/s", "Achieved bandwidth."),
    _c("large_packet_ratio", "DOUBLE", "ratio", "Share of large packets."),
)

_table(
    "job_links",
    "Links between ranks from communication_matrix.json, as global ranks where the group is known.",
    _JOB_ID,
    _STEP,
    _c("op_kind", "VARCHAR", "", "'collective' or 'p2p'."),
    _c("group_name", "VARCHAR", "", "Communication group hash."),
    _c("matrix_op", "VARCHAR", "", "Matrix entry, e.g. 'allreduce-total' (the total) or 'allreduce-top1'."),
    _c("op_name", "VARCHAR", "", "The op of a top/middle/bottom entry; NULL for a total."),
    _c("reported_by", "INTEGER", "", "Global rank whose matrix file holds the row."),
    _c("src_rank", "INTEGER", "", "Global source rank; NULL when the group's members are unknown."),
    _c("dst_rank", "INTEGER", "", "Global destination rank; NULL when the group's members are unknown."),
    _c("src_group_rank", "INTEGER", "", "Source rank within the group, as the file writes it."),
    _c("dst_group_rank", "INTEGER", "", "Destination rank within the group, as the file writes it."),
    _c("transport", "VARCHAR", "", "'HCCS', 'RDMA', 'PCIE', 'SIO' or 'LOCAL'."),
    _c("transit_size_mb", "DOUBLE", "MB", "Data moved."),
    _c("transit_us", "DOUBLE", "us", "Time moving it."),
    _c("bandwidth_gb_per_s", "DOUBLE", "GB/s", "Achieved bandwidth."),
)


def ddl(table: str, name: str | None = None) -> str:
    """CREATE TABLE statement for one normalized table.

    >>> ddl("l2_cache").splitlines()[0]
    'CREATE TABLE IF NOT EXISTS l2_cache ('
    """
    return TABLES[table].ddl(name)


def column(table: str, name: str) -> Column:
    """Look up one column; KeyError when absent."""
    for c in TABLES[table].columns:
        if c.name == name:
            return c
    raise KeyError(f"{table}.{name}")


def has_column(table: str, name: str) -> bool:
    """True when the schema declares table.name.

    >>> has_column("ops", "mte_time_us"), has_column("ops", "nope")
    (True, False)
    """
    return table in TABLES and any(c.name == name for c in TABLES[table].columns)


PIPE_COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in _PIPE_COLUMNS)
