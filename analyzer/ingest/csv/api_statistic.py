"""api_statistic_*.csv (msprof) and api_statistic.csv (torch_npu) -> the api_stats table.

Header ``[Device_id,]Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance``. A
``Device_id`` of ``host`` (or no Device_id column) marks a host-side row: device_id NULL,
is_host TRUE.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.ingest.csv.csv_columns import Field, load_csv_table
from analyzer.ingest.model import ReadContext

_FIELDS = (
    Field("device_id", ("Device_id", "Device ID"), "device"),
    Field("_device_text", ("Device_id", "Device ID"), "text"),
    Field("level", ("Level",), "text"),
    Field("api_name", ("API Name",), "text", required=True),
    Field("total_time_us", ("Time(us)",), "double", required=True),
    Field("call_count", ("Count",), "bigint", required=True),
    Field("avg_time_us", ("Avg(us)",), "double"),
    Field("min_time_us", ("Min(us)",), "double"),
    Field("max_time_us", ("Max(us)",), "double"),
    Field("variance_us2", ("Variance",), "double"),
)


def load_api_statistic(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read api_statistic files (all slices) into api_stats. Returns rows inserted."""
    return load_csv_table(
        con,
        paths,
        ctx,
        "api_stats",
        _FIELDS,
        "api_statistic (Level, API Name, Time(us), Count, ...)",
        derived={"is_host": _IS_HOST},
    )


# With a Device_id column, 'host' rows are host-side; without one, every row is (torch_npu).
_IS_HOST = "coalesce(lower(_device_text) = 'host', TRUE)"
