"""step_trace_time.csv (torch_npu) -> the steps table (source 'step_trace_time').

Three header variants are accepted by name: 2023 ``Step,Computing,...,Communication(Not Overlapped
and Exclude Receive)``; 2025 the same plus ``Preparing``; CANN 8.3.RC1 ``Device_id,Step,...,
Preparing``. All values are microseconds. An empty ``Step`` (no schedule) gives step_id NULL.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.ingest.csv.csv_columns import Field, load_csv_table
from analyzer.ingest.model import ReadContext

_FIELDS = (
    Field("device_id", ("Device_id", "Device ID"), "device"),
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
)


def load_step_trace_time(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read step_trace_time.csv into steps. Returns rows inserted."""
    return load_csv_table(
        con,
        paths,
        ctx,
        "steps",
        _FIELDS,
        "step_trace_time (Step, Computing, Communication(Not Overlapped), ...)",
        constants={"source": "step_trace_time"},
    )
