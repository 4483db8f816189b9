"""task_time_*.csv (msprof) -> timeline rows of kind 'device_task', non-compute tasks included.

C++ header ``Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),
task_stop(us)``; start and stop carry a trailing TAB and become exact ns. ``kernel_name`` is
``N/A`` for non-compute tasks (PROFILING_ENABLE, EVENT_RECORD, ...): name NULL, task_type kept.

The legacy Python header (``Time(%),Time(us),Count,Avg(us),...,Type,API,Task ID,Op Name,
Stream ID``) holds per-task totals without start times: it is recognised, reported and not
loaded, because totals are not timeline events (op_stats and ops carry the same times).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.ingest.csv.csv_columns import CsvTarget, Field, column_types
from analyzer.ingest.csv.csv_source import stream_csv
from analyzer.ingest.inserts import insert_params
from analyzer.ingest.model import ReadContext
from analyzer.ingest.row_checks import drop_duplicate_rows, report_negative_times

_FIELDS = (
    Field("device_id", ("Device_id", "Device ID"), "device"),
    Field("name", ("kernel_name",), "text"),
    Field("task_type", ("kernel_type",), "text"),
    Field("stream_id", ("stream_id",), "int", required=True),
    Field("task_id", ("task_id",), "bigint", required=True),
    Field("dur_us", ("task_time(us)",), "double", required=True),
    Field("start_ns", ("task_start(us)",), "ns", required=True),
    Field("end_ns", ("task_stop(us)",), "ns"),
)
_LEGACY_MARKERS = {"Time(%)", "Waiting(us)", "Running(us)", "Pending(us)"}
CONSTANTS = {"kind": "device_task", "process": "Ascend Hardware"}
_DERIVED = {"thread_id": "stream_id", "thread_name": "'Stream ' || stream_id"}


_END_NS = {"end_ns": "coalesce(end_ns, start_ns + CAST(round(dur_us * 1000) AS BIGINT))"}
_EXPECTED = "task_time (Device_id, kernel_name, kernel_type, stream_id, ...)"
_TARGET = CsvTarget("timeline", _FIELDS, _EXPECTED, CONSTANTS, _DERIVED, _END_NS)
# What the reader's checks on the inserted rows look at (drop_duplicate_rows, report_negative_times).
ROW_KEY = ("start_ns", "stream_id", "task_id", "dur_us")
TIMES = ("start_ns", "dur_us")


def statement(
    path: Path, columns: list[str], first_row: list[str], ctx: ReadContext, rows_run: bool = False
) -> str | None:
    """The INSERT of a file's rows into timeline over the ``{scan}`` placeholder, or None (a legacy layout,
    or a header lacking columns: reported). ``rows_run``: the scan's rows carry their ``run_id`` (csv_group)."""
    if "task_start(us)" not in columns and _LEGACY_MARKERS <= set(columns):
        ctx.report(
            path,
            "line 1",
            "info",
            "legacy task_time layout (per-task totals, no start times): not loaded",
            "op_summary / op_statistic carry these times; a current msprof writes task times",
        )
        ctx.mark_read(path)  # read and recognised, deliberately not loaded
        return None
    return _TARGET.statement(path, columns, first_row, ctx, rows_run)


def types(columns: list[str]) -> dict[str, str]:
    """The header columns parsed as numbers."""
    return column_types(columns, _FIELDS)


def load_task_time(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read task_time files (all slices) into timeline. Returns rows inserted."""

    def read(path: Path, columns: list[str], first_row: list[str]) -> str | None:
        return statement(path, columns, first_row, ctx)

    params = insert_params(ctx, CONSTANTS)
    files = stream_csv(con, paths, ctx, read, params, types)
    if files:  # task_time is read first (loader._FIRST): the run's timeline rows are its rows
        drop_duplicate_rows(con, ctx, "timeline", files[0].path, key=ROW_KEY)
        report_negative_times(con, ctx, "timeline", files[0].path, TIMES)
    return sum(f.rows for f in files)
