"""op_statistic_*.csv (msprof) and op_statistic.csv (torch_npu) -> the op_stats table.

Header ``[Device_id,][Model Name,]OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),
Max Time(us),Ratio(%)``: Min, Avg, Max in that order, but read by name anyway.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.ingest.csv.csv_columns import Field, load_csv_table
from analyzer.ingest.model import ReadContext

# Shared with communication_statistic, which has the same columns except Core Type.
STAT_FIELDS = (
    Field("device_id", ("Device_id", "Device ID"), "device"),
    Field("model_name", ("Model Name",), "text"),
    Field("op_type", ("OP Type", "Op Type"), "text", required=True),
    Field("call_count", ("Count",), "bigint", required=True),
    Field("total_time_us", ("Total Time(us)",), "double", required=True),
    Field("min_time_us", ("Min Time(us)",), "double"),
    Field("avg_time_us", ("Avg Time(us)",), "double"),
    Field("max_time_us", ("Max Time(us)",), "double"),
    Field("time_share_pct", ("Ratio(%)",), "double"),
)
_FIELDS = (*STAT_FIELDS, Field("core_type", ("Core Type",), "text", required=True))


def load_op_statistic(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read op_statistic files (all slices) into op_stats. Returns rows inserted."""
    return load_csv_table(
        con,
        paths,
        ctx,
        "op_stats",
        _FIELDS,
        "op_statistic (OP Type, Core Type, Count, Total Time(us), ...)",
    )
