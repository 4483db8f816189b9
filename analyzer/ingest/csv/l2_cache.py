"""l2_cache.csv (torch_npu) and l2_cache_*.csv (msprof) -> the l2_cache table.

Header ``[Device_id,]Stream Id,Task Id,Hit Rate,Victim Rate,Op Name``; rates are 0-1 fractions.
``Hit Rate`` is often ``N/A`` on Atlas A2 (NULL, not zero).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.ingest.csv.csv_columns import Field, load_csv_table
from analyzer.ingest.model import ReadContext

_FIELDS = (
    Field("device_id", ("Device_id", "Device ID"), "device"),
    Field("stream_id", ("Stream Id", "Stream ID"), "int", required=True),
    Field("task_id", ("Task Id", "Task ID"), "bigint", required=True),
    Field("op_name", ("Op Name", "Name"), "text"),
    Field("hit_ratio", ("Hit Rate",), "double"),
    Field("victim_ratio", ("Victim Rate",), "double"),
)


def load_l2_cache(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read l2_cache files into l2_cache. Returns rows inserted."""
    return load_csv_table(
        con,
        paths,
        ctx,
        "l2_cache",
        _FIELDS,
        "l2_cache (Stream Id, Task Id, Hit Rate, Victim Rate, Op Name)",
    )
