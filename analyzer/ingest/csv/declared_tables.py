"""The simple CSV files as declarations: each kind's normalized table, its columns by header name, its constants.

One loader, ``load_declared``, reads every kind declared here through ``csv_columns.load_csv_table``.
A file family that needs more than a declaration (op_summary, task_time, core_utilization) keeps its
own reader module. Columns are read by header name, never by position; the first accepted header
present wins, so a column written in KB and in MB by different producers is two fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import duckdb

from analyzer.ingest.csv.csv_columns import Field, load_csv_table
from analyzer.ingest.model import ReadContext


@dataclass(frozen=True)
class CsvTable:
    """How one kind of CSV file fills a normalized table (the arguments of ``load_csv_table``)."""

    table: str
    fields: tuple[Field, ...]
    expected: str  # the header the problem message says was expected
    constants: Mapping[str, object] | None = None
    derived: Mapping[str, str] | None = None
    replaced: Mapping[str, str] | None = None


_DEVICE = Field("device_id", ("Device_id", "Device ID"), "device")
_DEVICE_OR_TYPE = Field("device_id", ("Device_id", "Device ID", "Device Type", "Device"), "device")
_TIMESTAMP = Field("ts_ns", ("Timestamp(us)", "timestamp(us)"), "ns", required=True)

# op_statistic and communication_statistic: the same columns except Core Type.
_STAT_FIELDS = (
    _DEVICE,
    Field("model_name", ("Model Name",), "text"),
    Field("op_type", ("OP Type", "Op Type"), "text", required=True),
    Field("call_count", ("Count",), "bigint", required=True),
    Field("total_time_us", ("Total Time(us)",), "double", required=True),
    Field("min_time_us", ("Min Time(us)",), "double"),
    Field("avg_time_us", ("Avg Time(us)",), "double"),
    Field("max_time_us", ("Max Time(us)",), "double"),
    Field("time_share_pct", ("Ratio(%)",), "double"),
)

# hbm_*.csv and ddr_*.csv: averages over the collection window, not a time series (so not counters).
_BANDWIDTH_FIELDS = (
    _DEVICE,
    Field("unit_id", ("Metric",), "text", required=True),
    Field("read_mb_per_s", ("Read(MB/s)",), "double", required=True),
    Field("write_mb_per_s", ("Write(MB/s)",), "double", required=True),
)

DECLARED: dict[str, CsvTable] = {
    # op_statistic_*.csv (msprof) and op_statistic.csv (torch_npu): ``[Device_id,][Model Name,]OP Type,
    # Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)``.
    "op_statistic": CsvTable(
        "op_stats",
        (*_STAT_FIELDS, Field("core_type", ("Core Type",), "text", required=True)),
        "op_statistic (OP Type, Core Type, Count, Total Time(us), ...)",
    ),
    # api_statistic_*.csv (msprof) and api_statistic.csv (torch_npu): ``[Device_id,]Level,API Name,
    # Time(us),Count,Avg(us),Min(us),Max(us),Variance``. With a Device_id column, 'host' rows are
    # host-side (device_id NULL); without one, every row is (torch_npu).
    "api_statistic": CsvTable(
        "api_stats",
        (
            _DEVICE,
            Field("_device_text", ("Device_id", "Device ID"), "text"),
            Field("level", ("Level",), "text"),
            Field("api_name", ("API Name",), "text", required=True),
            Field("total_time_us", ("Time(us)",), "double", required=True),
            Field("call_count", ("Count",), "bigint", required=True),
            Field("avg_time_us", ("Avg(us)",), "double"),
            Field("min_time_us", ("Min(us)",), "double"),
            Field("max_time_us", ("Max(us)",), "double"),
            Field("variance_us2", ("Variance",), "double"),
        ),
        "api_statistic (Level, API Name, Time(us), Count, ...)",
        derived={"is_host": "coalesce(lower(_device_text) = 'host', TRUE)"},
    ),
    # step_trace_time.csv (torch_npu), three header variants: 2023 ``Step,Computing,...,
    # Communication(Not Overlapped and Exclude Receive)``; 2025 the same plus ``Preparing``; CANN
    # 8.3.RC1 ``Device_id,Step,...,Preparing``. Microseconds. An empty Step (no schedule): step_id NULL.
    "step_trace_time": CsvTable(
        "steps",
        (
            _DEVICE,
            Field("step_id", ("Step",), "bigint", required=True),
            Field("computing_us", ("Computing",), "double", required=True),
            Field("comm_not_overlapped_us", ("Communication(Not Overlapped)",), "double", required=True),
            Field("overlapped_us", ("Overlapped",), "double"),
            Field("comm_us", ("Communication",), "double"),
            Field("free_us", ("Free",), "double"),
            Field("stage_us", ("Stage",), "double"),
            Field("bubble_us", ("Bubble",), "double"),
            Field(
                "comm_not_overlapped_excl_receive_us",
                ("Communication(Not Overlapped and Exclude Receive)",),
                "double",
            ),
            Field("preparing_us", ("Preparing",), "double"),
        ),
        "step_trace_time (Step, Computing, Communication(Not Overlapped), ...)",
        constants={"source": "step_trace_time"},
    ),
    # step_trace_*.csv (msprof, graph / iteration mode): ``Device_id,Iteration ID,FP Start(us),BP End(us),
    # Iteration End(us),Iteration Time(us),FP to BP Time(us),Iteration Refresh(us),Data Aug Bound(us),
    # Model ID,Reduce Start(us),Reduce Duration(us)[,Reduce Start(us),Reduce Duration(us)...]``. The
    # repeated Reduce pair gives duplicate header names (DuckDB suffixes them ``_1``, ...); only the
    # fixed prefix is read. FP Start and Iteration End are absolute timestamps, kept exact. FP Start is
    # N/A in offline inference; the step then starts Iteration Time before its end.
    "step_trace": CsvTable(
        "steps",
        (
            _DEVICE,
            Field("step_id", ("Iteration ID",), "bigint", required=True),
            Field("_fp_start_ns", ("FP Start(us)",), "ns", required=True),
            Field("end_ns", ("Iteration End(us)",), "ns", required=True),
            Field("iteration_time_us", ("Iteration Time(us)",), "double", required=True),
            Field("fp_bp_time_us", ("FP to BP Time(us)",), "double"),
            Field("data_aug_bound_us", ("Data Aug Bound(us)",), "double"),
        ),
        "msprof step_trace (Iteration ID, FP Start(us), Iteration End(us), ...)",
        constants={"source": "step_trace"},
        derived={"start_ns": "coalesce(_fp_start_ns, end_ns - CAST(round(iteration_time_us * 1000) AS BIGINT))"},
    ),
    # communication_statistic_*.csv (msprof): ``[Device_id,]OP Type,Count,Total Time(us),Min Time(us),
    # Avg Time(us),Max Time(us),Ratio(%)`` (from msprof's export config and docs; no real file seen).
    "communication_statistic": CsvTable(
        "op_stats",
        _STAT_FIELDS,
        "communication_statistic (OP Type, Count, Total Time(us), ...)",
        constants={"core_type": "COMMUNICATION"},
    ),
    # memory_record.csv (torch_npu): ``Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),
    # Total Active(MB),Stream Ptr,Device Type``; msprof memory_record_*.csv: ``Device_id,Component,
    # Timestamp(us),Total Allocated(KB),Total Reserved(KB),Device`` (KB to MB). Empty cells are NULL.
    "memory_record": CsvTable(
        "memory_records",
        (
            _DEVICE_OR_TYPE,
            Field("component", ("Component",), "text", required=True),
            _TIMESTAMP,
            Field("allocated_mb", ("Total Allocated(MB)",), "double"),
            Field("allocated_mb", ("Total Allocated(KB)",), "kb_to_mb"),
            Field("reserved_mb", ("Total Reserved(MB)",), "double", required=True),
            Field("reserved_mb", ("Total Reserved(KB)",), "kb_to_mb", required=True),
            Field("active_mb", ("Total Active(MB)",), "double"),
            Field("active_mb", ("Total Active(KB)",), "kb_to_mb"),
        ),
        "memory_record (Component, Timestamp(us), Total Reserved(MB|KB), ...)",
        constants={"source": "memory_record"},
    ),
    # npu_module_mem.csv (torch_npu, MB) / npu_module_mem_*.csv (msprof, KB): ``[Device_id,]Component,
    # Timestamp(us),Total Reserved(MB|KB)[,Device]``; a reserved size of -1 (KB or MB) is unknown: NULL.
    "npu_module_mem": CsvTable(
        "memory_records",
        (
            _DEVICE_OR_TYPE,
            Field("component", ("Component",), "text", required=True),
            _TIMESTAMP,
            Field("reserved_mb", ("Total Reserved(MB)",), "double", required=True),
            Field("reserved_mb", ("Total Reserved(KB)",), "kb_to_mb", required=True),
        ),
        "npu_module_mem (Component, Timestamp(us), Total Reserved(MB|KB), ...)",
        constants={"source": "npu_module_mem"},
        replaced={"reserved_mb": "CASE WHEN reserved_mb >= 0 THEN reserved_mb END"},
    ),
    # npu_mem_*.csv (msprof): ``Device_id,event,ddr(KB),hbm(KB),memory(KB),timestamp(us)``; the event
    # (app / device) is the component; memory(KB) is ddr + hbm and is not kept.
    "npu_mem": CsvTable(
        "memory_records",
        (
            _DEVICE_OR_TYPE,
            Field("component", ("event",), "text", required=True),
            _TIMESTAMP,
            Field("ddr_mb", ("ddr(KB)",), "kb_to_mb"),
            Field("hbm_mb", ("hbm(KB)",), "kb_to_mb"),
        ),
        "npu_mem (Device_id, event, ddr(KB), hbm(KB), memory(KB), timestamp(us))",
        constants={"source": "npu_mem"},
    ),
    # operator_memory.csv (torch_npu), one row per operator allocation: ``Name,Size(KB),Allocation
    # Time(us),Release Time(us),Active Release Time(us),Duration(us),Active Duration(us),Allocation Total
    # Allocated(MB),Allocation Total Reserved(MB),...,Stream Ptr,Device Type``. Empty cells (not released
    # inside the window) are NULL and negative sizes (allocated before the window) are kept: both are
    # legitimate. The device comes from Device Type (``NPU:0``).
    "operator_memory": CsvTable(
        "op_memory",
        (
            _DEVICE_OR_TYPE,
            Field("op_name", ("Name", "Op Name"), "text", required=True),
            Field("size_kb", ("Size(KB)",), "double", required=True),
            Field("alloc_ns", ("Allocation Time(us)",), "ns", required=True),
            Field("release_ns", ("Release Time(us)",), "ns"),
            Field("duration_us", ("Duration(us)",), "double"),
            Field("allocated_total_mb", ("Allocation Total Allocated(MB)",), "double"),
            Field("allocated_total_mb", ("Allocation Total Allocated(KB)",), "kb_to_mb"),
            Field("reserved_total_mb", ("Allocation Total Reserved(MB)",), "double"),
            Field("reserved_total_mb", ("Allocation Total Reserved(KB)",), "kb_to_mb"),
        ),
        "operator_memory (Name, Size(KB), Allocation Time(us), ...)",
    ),
    # l2_cache.csv (torch_npu) and l2_cache_*.csv (msprof): ``[Device_id,]Stream Id,Task Id,Hit Rate,
    # Victim Rate,Op Name``; rates are 0-1 fractions. Hit Rate is often N/A on Atlas A2 (NULL, not zero).
    "l2_cache": CsvTable(
        "l2_cache",
        (
            _DEVICE,
            Field("stream_id", ("Stream Id", "Stream ID"), "int", required=True),
            Field("task_id", ("Task Id", "Task ID"), "bigint", required=True),
            Field("op_name", ("Op Name", "Name"), "text"),
            Field("hit_ratio", ("Hit Rate",), "double"),
            Field("victim_ratio", ("Victim Rate",), "double"),
        ),
        "l2_cache (Stream Id, Task Id, Hit Rate, Victim Rate, Op Name)",
    ),
    # hbm_*.csv (msprof): ``[Device_id,]Metric,Read(MB/s),Write(MB/s)``; Metric is the unit id or Average.
    "hbm": CsvTable(
        "bandwidth_summary",
        _BANDWIDTH_FIELDS,
        "hbm ([Device_id,]Metric, Read(MB/s), Write(MB/s))",
        constants={"memory": "HBM"},
    ),
    # ddr_*.csv (msprof): the same header as hbm.
    "ddr": CsvTable(
        "bandwidth_summary",
        _BANDWIDTH_FIELDS,
        "ddr ([Device_id,]Metric, Read(MB/s), Write(MB/s))",
        constants={"memory": "DDR"},
    ),
}


def load_declared(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext, kind: str) -> int:
    """Read the files of a declared kind (all slices) into its table. Returns rows inserted."""
    d = DECLARED[kind]
    return load_csv_table(con, paths, ctx, d.table, d.fields, d.expected, d.constants, d.derived, d.replaced)


def reader(kind: str) -> Callable[[duckdb.DuckDBPyConnection, tuple[Path, ...], ReadContext], int]:
    """The reader of one declared kind, with the signature of every reader in ``readers.READERS``."""
    return partial(load_declared, kind=kind)
