"""operator_memory.csv (torch_npu) -> the op_memory table: one row per operator allocation.

Header ``Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),
Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),...,Stream Ptr,
Device Type``. Empty cells (not released inside the window) are NULL and negative sizes
(allocated before the window) are kept as written: both are legitimate. Timestamps carry a
trailing TAB and are kept exact. The device comes from ``Device Type`` (``NPU:0``).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.ingest.csv.csv_columns import Field, load_csv_table
from analyzer.ingest.model import ReadContext

_FIELDS = (
    Field("device_id", ("Device_id", "Device ID", "Device Type", "Device"), "device"),
    Field("op_name", ("Name", "Op Name"), "text", required=True),
    Field("size_kb", ("Size(KB)",), "double", required=True),
    Field("alloc_ns", ("Allocation Time(us)",), "ns", required=True),
    Field("release_ns", ("Release Time(us)",), "ns"),
    Field("duration_us", ("Duration(us)",), "double"),
    Field("allocated_total_mb", ("Allocation Total Allocated(MB)",), "double"),
    Field("allocated_total_mb", ("Allocation Total Allocated(KB)",), "kb_to_mb"),
    Field("reserved_total_mb", ("Allocation Total Reserved(MB)",), "double"),
    Field("reserved_total_mb", ("Allocation Total Reserved(KB)",), "kb_to_mb"),
)


def load_operator_memory(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read operator_memory files into op_memory. Returns rows inserted."""
    return load_csv_table(
        con,
        paths,
        ctx,
        "op_memory",
        _FIELDS,
        "operator_memory (Name, Size(KB), Allocation Time(us), ...)",
    )
