"""THE catalog schema: every table a batch catalog (``FILE.duckdb``) holds, with types, units and meaning.

A catalog keeps, per run, a small summary of what ingest and diagnosis found (never the raw
event tables), so that listing, querying, diffing and sweeping many runs needs no re-ingest.
``docs/catalog.md`` is generated from this module (``npu-triage runs --schema-markdown``).
Rows carry no wall-clock timestamps: an interrupted batch that is rerun yields the same rows.
"""

from __future__ import annotations

from analyzer.ingest.schema import Column, Table

CATALOG_FORMAT_VERSION = 1
CATALOG_TABLES: dict[str, Table] = {}


def _c(name: str, type_: str, unit: str, doc: str) -> Column:
    return Column(name, type_, unit, doc)


def _table(name: str, doc: str, *columns: Column) -> None:
    CATALOG_TABLES[name] = Table(name, doc, tuple(columns))


_RUN_ID = _c(
    "run_id",
    "VARCHAR",
    "",
    "Catalog run id: '<export folder name>@<first 8 fingerprint digits>', "
    "plus '/dev<N>' when one export holds several devices. Stable across reruns.",
)
_STEP = _c("step_id", "BIGINT", "", "Step id; NULL when the run has no steps (the whole run counts as one step).")

_table(
    "catalog_runs",
    "One row per run: where it was found, what wrote it, on what, with which settings.",
    _RUN_ID,
    _c("path", "VARCHAR", "", "Export folder relative to the batch root; inside an archive as 'a.zip!/inner/dir'."),
    _c(
        "fingerprint",
        "VARCHAR",
        "",
        "Content fingerprint of the export (ingest/metadata/fingerprint.py); the incremental key.",
    ),
    _c("device_id", "INTEGER", "", "NPU device id where known."),
    _c("rank_id", "INTEGER", "", "Distributed rank where known."),
    _c("producer", "VARCHAR", "", "'torch_npu', 'mindspore', 'msprof' or 'unknown'."),
    _c("export_type", "VARCHAR", "", "'text' or 'db'."),
    _c("cann_version", "VARCHAR", "", "CANN version from the export's metadata."),
    _c("torch_npu_version", "VARCHAR", "", "torch_npu version from the export's metadata."),
    _c("chip", "VARCHAR", "", "Chip name, e.g. 'Ascend910B'."),
    _c("model_name", "VARCHAR", "", "Model name where known (metadata or a user label)."),
    _c("batch_size", "INTEGER", "", "Batch size where known (metadata or a user label)."),
    _c("profiler_level", "VARCHAR", "", "Collection setting: torch_npu profiler level."),
    _c("aic_metrics", "VARCHAR", "", "Collection setting: AI Core metric set."),
    _c("aic_mode", "VARCHAR", "", "Collection setting: 'task-based' or 'sample-based'."),
    _c("pmu_collected", "BOOLEAN", "", "Whether per-task PMU pipeline columns were collected."),
    _c("not_collected", "VARCHAR[]", "", "Metric families the export lacks, with the setting that collects each."),
)

_table(
    "run_metrics",
    "One row per run: span, device busy time, step-time statistics, task count, top op types.",
    _RUN_ID,
    _c(
        "span_us",
        "DOUBLE",
        "us",
        "The analysed span: all steps together, else first device task start to last device task end "
        "(the diagnosis' summary.span_us).",
    ),
    _c(
        "busy_us",
        "DOUBLE",
        "us",
        "Busy time: the time breakdown's computing part (some compute task ran), the diagnosis' "
        "summary.computing_us (helper view _run_busy).",
    ),
    _c("busy_ratio", "DOUBLE", "ratio", "busy_us / span_us: the diagnosis' summary.computing_ratio."),
    _c("task_count", "BIGINT", "count", "Device tasks (rows of ops)."),
    _c("step_count", "BIGINT", "count", "Steps with a time (0 when the run has no steps)."),
    _c("step_time_mean_us", "DOUBLE", "us", "Mean step time (steps table, else first-to-last task per step)."),
    _c("step_time_std_us", "DOUBLE", "us", "Sample standard deviation of the step time; NULL under 2 steps."),
    _c("step_time_p50_us", "DOUBLE", "us", "Median step time."),
    _c("step_time_max_us", "DOUBLE", "us", "Longest step."),
    _c("top_op_types", "VARCHAR[]", "", "Up to 5 op types with the most device time, most first."),
    _c("top_op_type_shares", "DOUBLE[]", "ratio", "Their shares of all device task time, same order."),
)

_table(
    "findings",
    "Every finding of every run, in the run's rank order.",
    _RUN_ID,
    _c("rank", "INTEGER", "", "1 = the run's top finding."),
    _c("code", "VARCHAR", "", "Rule id (the rule file's id)."),
    _c("rule", "VARCHAR", "", "Rule name."),
    _c("severity", "VARCHAR", "", "'info', 'warning' or 'critical'."),
    _c("category", "VARCHAR", "", "Rule category."),
    _c("title", "VARCHAR", "", "Finding heading."),
    _c("subject", "VARCHAR", "", "What the finding is about (op type, step, group, ...)."),
    _c("value", "DOUBLE", "see unit", "The measured value."),
    _c("threshold", "DOUBLE", "see unit", "The rule's limit."),
    _c("metric", "VARCHAR", "", "What value measures."),
    _c("unit", "VARCHAR", "", "Unit of value."),
    _c("impact_us", "DOUBLE", "us", "Device time a fix could recover."),
    _c("span_share", "DOUBLE", "ratio", "impact_us / span."),
    _c("confidence", "VARCHAR", "", "'high', 'medium' or 'low'."),
    _c("message", "VARCHAR", "", "The rendered message."),
)

_table(
    "failures",
    "Exports (or archives) that could not be used, and why. A batch records them and goes on.",
    _c("path", "VARCHAR", "", "Export folder or archive, relative to the batch root."),
    _c("fingerprint", "VARCHAR", "", "Fingerprint of the export (or of the archive file) that failed."),
    _c("message", "VARCHAR", "", "What went wrong and what to do."),
)

_table(
    "run_problems",
    "Ingest problems of every catalogued run (errors and warnings).",
    _RUN_ID,
    _c("file", "VARCHAR", "", "File, relative to the export folder."),
    _c("location", "VARCHAR", "", "Where in the file."),
    _c("severity", "VARCHAR", "", "'error', 'warning' or 'info'."),
    _c("problem", "VARCHAR", "", "What is wrong."),
    _c("hint", "VARCHAR", "", "What to do."),
)

_table(
    "op_type_stats",
    "Per run and op type: launches and device time (the diff's per-type totals).",
    _RUN_ID,
    _c("op_type", "VARCHAR", "", "Op type; the task type in brackets when the export recorded no type."),
    _c("launch_count", "BIGINT", "count", "Launches over the run."),
    _c("total_dur_us", "DOUBLE", "us", "Summed task duration."),
    _c("mean_dur_us", "DOUBLE", "us", "Mean task duration."),
    _c("core_time_us", "DOUBLE", "us", "Summed core time (NULL without PMU data)."),
    _c("mte_time_us", "DOUBLE", "us", "Summed MTE time (NULL without PMU data)."),
)

_table(
    "op_type_step_stats",
    "Per run, step and op type: launches and device time (the diff's noise model).",
    _RUN_ID,
    _STEP,
    _c("op_type", "VARCHAR", "", "Op type, as in op_type_stats."),
    _c("launch_count", "BIGINT", "count", "Launches in the step."),
    _c("total_dur_us", "DOUBLE", "us", "Summed task duration in the step."),
)

_table(
    "step_times",
    "Per run and step: the step time, and the device pipe times summed over its tasks.",
    _RUN_ID,
    _STEP,
    _c("step_time_us", "DOUBLE", "us", "Step time (steps table, else first task start to last task end)."),
    _c("core_time_us", "DOUBLE", "us", "Summed core time of the step's tasks."),
    _c("cube_time_us", "DOUBLE", "us", "Summed cube pipe time."),
    _c("vector_time_us", "DOUBLE", "us", "Summed vector pipe time."),
    _c("scalar_time_us", "DOUBLE", "us", "Summed scalar pipe time."),
    _c("mte_time_us", "DOUBLE", "us", "Summed MTE time."),
)

_table(
    "op_positions",
    "Per run: the op sequence of a typical step (steps with the most common task count), one row per "
    "position, with the median duration at that position over those steps (the diff's per-op alignment).",
    _RUN_ID,
    _c("ordinal", "BIGINT", "", "Position of the task within its step, from 0, by start time."),
    _c("op_type", "VARCHAR", "", "Op type at this position (the most common one over the steps)."),
    _c("op_name_norm", "VARCHAR", "", "Op name with numeric suffixes stripped ('MatMul_12' -> 'MatMul')."),
    _c("input_shapes", "VARCHAR", "", "Input shapes at this position."),
    _c("step_count", "BIGINT", "count", "Steps the position was taken over."),
    _c("dur_us_median", "DOUBLE", "us", "Median duration at this position over those steps."),
)


# Jobs (several rank exports of one distributed run, analyzer/job/): one row set per job, keyed by job_id.
_JOB_ID = _c(
    "job_id",
    "VARCHAR",
    "",
    "Catalog job id: '<job folder name>@<first 8 digits of the fingerprint over its ranks' exports>'.",
)

_table(
    "catalog_jobs",
    "One row per job: where it was found, how many ranks, what they hold, its step time.",
    _JOB_ID,
    _c("path", "VARCHAR", "", "The folder holding the ranks, relative to the batch root."),
    _c("fingerprint", "VARCHAR", "", "Fingerprint over the ranks' export fingerprints; the incremental key."),
    _c("rank_count", "INTEGER", "count", "Ranks found."),
    _c("world_size", "INTEGER", "count", "World size from the metadata; NULL when not recorded."),
    _c("summary_only_rank_count", "INTEGER", "count", "Ranks whose export holds summaries only."),
    _c("step_count", "INTEGER", "count", "Steps in the step traces."),
    _c("job_step_us", "DOUBLE", "us", "Mean over steps of the slowest rank's step time."),
    _c("step_spread_us", "DOUBLE", "us", "Mean over steps of slowest minus fastest rank's step time."),
    _c("groups", "VARCHAR", "", "Where the parallel groups came from (metadata or inferred)."),
)

_table(
    "job_rank_metrics",
    "Per job and rank: the step-trace parts and the collective wait and transit, means per step.",
    _JOB_ID,
    _c("rank", "INTEGER", "", "Global rank."),
    _c("pp_stage", "INTEGER", "", "Pipeline stage where known."),
    _c("stage_us", "DOUBLE", "us", "Step time of the rank."),
    _c("computing_us", "DOUBLE", "us", "Computing time."),
    _c("comm_not_overlapped_us", "DOUBLE", "us", "Communication not overlapped."),
    _c("free_us", "DOUBLE", "us", "Free (device idle) time."),
    _c("wait_us", "DOUBLE", "us", "Wait in communication ops."),
    _c("transit_us", "DOUBLE", "us", "Transit in communication ops."),
)

_table(
    "job_link_metrics",
    "Per job and link (global ranks, both directions together): data, time and bandwidth per step.",
    _JOB_ID,
    _c("rank_a", "INTEGER", "", "The lower global rank of the pair."),
    _c("rank_b", "INTEGER", "", "The higher global rank of the pair."),
    _c("transport", "VARCHAR", "", "'HCCS', 'RDMA', 'PCIE' or 'SIO'."),
    _c("transit_size_mb", "DOUBLE", "MB", "Data moved per step."),
    _c("transit_us", "DOUBLE", "us", "Transit time per step."),
    _c("bandwidth_gb_per_s", "DOUBLE", "GB/s", "Data over transit time."),
)

_table(
    "job_findings",
    "Per job its ranked findings (rules of scope job).",
    _JOB_ID,
    _c("position", "INTEGER", "", "1 = the finding that would recover the most job step time."),
    _c("code", "VARCHAR", "", "Rule id of a job rule."),
    _c("rule", "VARCHAR", "", "Rule name."),
    _c("severity", "VARCHAR", "", "'info', 'warning' or 'critical'."),
    _c("subject", "VARCHAR", "", "What it names: a rank, a link, a stage, a group."),
    _c("impact_us", "DOUBLE", "us", "Job step time per step it would recover."),
    _c("span_share", "DOUBLE", "ratio", "impact_us / the job step."),
    _c("message", "VARCHAR", "", "The finding's message."),
)


def catalog_ddl(table: str, name: str | None = None) -> str:
    """CREATE TABLE statement for one catalog table.

    >>> catalog_ddl("failures").splitlines()[0]
    'CREATE TABLE IF NOT EXISTS failures ('
    """
    return CATALOG_TABLES[table].ddl(name)


PER_RUN_TABLES: tuple[str, ...] = tuple(n for n, t in CATALOG_TABLES.items() if t.columns[0].name == "run_id")
