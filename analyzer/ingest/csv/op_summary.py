"""op_summary_*.csv (msprof) and kernel_details.csv (torch_npu) -> the ops table.

The raw header -> normalized column mapping lives here and nowhere else. Columns are read by
header name, never by position; either producer's names are accepted.
"""

from __future__ import annotations

from decimal import Decimal
from functools import partial
from pathlib import Path

import duckdb

from analyzer.ingest import sql_values as v
from analyzer.ingest.csv.csv_anchor import ns_anchor
from analyzer.ingest.csv.csv_columns import PARSED_AS, convert, text_only, trimmed_scan
from analyzer.ingest.csv.csv_source import StreamedFile, select_text, stream_csv
from analyzer.ingest.inserts import insert_sql
from analyzer.ingest.model import ReadContext
from analyzer.ingest.pipe_columns import INPUTS, with_derived
from analyzer.ingest.pmu_names import is_pipe_column, normalize_metric
from analyzer.ingest.row_checks import drop_duplicate_rows, report_negative_times

# normalized column -> (accepted raw headers, key of csv_columns.CONVERSIONS, see convert())
_IDENTITY: dict[str, tuple[tuple[str, ...], str]] = {
    "device_id": (("Device_id", "Device ID"), "int"),
    "step_id": (("Step Id", "Step ID", "Iteration ID"), "bigint"),
    "model_id": (("Model ID",), "bigint"),
    "task_id": (("Task ID",), "bigint"),
    "stream_id": (("Stream ID",), "int"),
    "context_id": (("Context ID",), "bigint"),
    "op_name": (("Op Name", "Name"), "text"),
    "op_type": (("OP Type", "Type"), "text"),
    "op_state": (("OP State",), "text"),
    "task_type": (("Task Type", "Accelerator Core"), "text"),
    "start_ns": (("Task Start Time(us)", "Start Time(us)", "Task Start Time"), "ns"),
    "dur_us": (("Task Duration(us)", "Duration(us)"), "double"),
    "wait_us": (("Task Wait Time(us)", "Wait Time(us)"), "double"),
    "block_dim": (("Block Num", "Block Dim"), "int"),
    "mix_block_dim": (("Mix Block Num", "Mix Block Dim"), "int"),
    "hf32_eligible": (("HF32 Eligible",), "bool"),
    "input_shapes": (("Input Shapes",), "unquoted"),
    "input_dtypes": (("Input Data Types",), "unquoted"),
    "input_formats": (("Input Formats",), "unquoted"),
    "output_shapes": (("Output Shapes",), "unquoted"),
    "output_dtypes": (("Output Data Types",), "unquoted"),
    "output_formats": (("Output Formats",), "unquoted"),
}
_NON_METRIC = {h for headers, _ in _IDENTITY.values() for h in headers} | {"Model Name", "Infer ID"}
REQUIRED = ("op_name", "start_ns", "dur_us")
# Unknown metric columns kept per row (extra_metrics): a header of thousands of columns stays bounded in time.
MAX_EXTRA_METRICS = 256
# Columns that tell two tasks apart: rows equal on them are compared whole for exact duplicates.
ROW_KEY = ("start_ns", "stream_id", "task_id", "context_id", "dur_us")


def _select_rows(
    columns: list[str], anchor_us: Decimal | None = None, carry: tuple[str, ...] = ()
) -> tuple[str, list[str]]:
    """The SELECT over the ``{scan}`` placeholder of the ops columns present (and NULL for the pipeline
    inputs absent, so that the derived columns always bind), and the normalized names of missing
    required ones. ``anchor_us``: where the start times lie (``csv_anchor``); ``carry``: scan columns
    passed through as they are."""
    present = set(columns)
    identity: dict[str, tuple[str, str]] = {}
    for target, (headers, how) in _IDENTITY.items():
        raw = next((h for h in headers if h in present), None)
        if raw is not None:
            identity[target] = (raw, how)
    # The metric columns below are never identity headers (_NON_METRIC): read as numbers, never trimmed.
    trimmed = text_only(list(identity.values()))
    items = [*carry]
    items += [f"{convert(how, raw, anchor_us, trimmed)} AS {target}" for target, (raw, how) in identity.items()]
    found = set(identity)
    extras: list[tuple[str, str]] = []
    for raw in columns:
        if raw in _NON_METRIC:
            continue
        name = normalize_metric(raw)
        if is_pipe_column(name):
            cast = "BIGINT" if name.endswith("_cycles") else "DOUBLE"
            expr = v.double(raw) if cast == "DOUBLE" else f"CAST({v.double(raw)} AS BIGINT)"
            items.append(f"{expr} AS {name}")
            found.add(name)
        else:
            extras.append((name, v.double(raw)))
    extras = extras[:MAX_EXTRA_METRICS]
    if extras:
        keys = ", ".join(f"'{k}'" for k, _ in extras)
        vals = ", ".join(e for _, e in extras)
        items.append(
            f"map_from_entries(list_filter(list_zip([{keys}], [{vals}]), lambda x: x[2] IS NOT NULL)) AS extra_metrics"
        )
    items += [f"NULL::DOUBLE AS {name}" for name in INPUTS if name not in found]
    missing = [r for r in REQUIRED if r not in found]
    return f"SELECT {', '.join(items)} FROM {trimmed_scan(trimmed)}", missing


def column_types(columns: list[str]) -> dict[str, str]:
    """The header columns ``_select_rows`` reads as numbers, and the type each is parsed as: the times,
    durations and ids of the identity columns, and the known metric columns (DOUBLE)."""
    present = set(columns)
    types = {}
    for headers, how in _IDENTITY.values():
        raw = next((h for h in headers if h in present), None)
        if raw is not None and how in PARSED_AS:
            types[raw] = PARSED_AS[how]
    # Unknown columns stay text: a new producer's text column must not cost the rows.
    return types | {c: "DOUBLE" for c in columns if c not in _NON_METRIC and is_pipe_column(normalize_metric(c))}


def ops_statement(
    path: Path, columns: list[str], first_row: list[str], ctx: ReadContext, rows_run: bool = False
) -> str | None:
    """The INSERT of a file's rows into ops over the ``{scan}`` placeholder (csv_source.stream_csv), or None
    with the header's problem reported. ``rows_run``: the scan's rows carry their ``run_id`` (a scan of
    many runs' files, csv_group) instead of the ``$run_id`` parameter."""
    anchor_us = ns_anchor(first_row, columns, list(_IDENTITY["start_ns"][0]))
    select, missing = _select_rows(columns, anchor_us, carry=("run_id",) if rows_run else ())
    if missing:
        ctx.report(
            path,
            "line 1",
            "error",
            f"header lacks required columns for {', '.join(missing)}",
            "expected an op_summary / kernel_details header (Name/Op Name, Start Time(us), Duration(us))",
        )
        return None
    _report_repeated_columns(path, columns, ctx)
    _report_unread_columns(path, columns, ctx)
    return insert_sql("ops", with_derived(select), derived=_END_NS, rows_run=rows_run)


_END_NS = {"end_ns": "TRY_CAST(start_ns + TRY_CAST(round(dur_us * 1000) AS HUGEINT) AS BIGINT)"}


def load_op_summary(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read op_summary / kernel_details files (all slices) into ops. Returns rows inserted.

    Each file is converted while DuckDB scans it (one pass; no text copy of millions of rows)."""
    files = stream_csv(con, paths, ctx, partial(ops_statement, ctx=ctx), {"run_id": ctx.run_id}, column_types)
    if not files:
        return 0
    drop_duplicate_rows(con, ctx, "ops", files[0].path, key=ROW_KEY)
    report_negative_times(con, ctx, "ops", files[0].path, TIMES)
    if _report_unusable_rows(con, ctx, files[0].path):
        for file in files:
            _report_ns_start_times(con, file, ctx)
    return sum(f.rows for f in files)


# Columns whose negative values report_negative_times names.
TIMES = ("start_ns", "dur_us")


def _report_unusable_rows(con: duckdb.DuckDBPyConnection, ctx: ReadContext, path: Path) -> int:
    """Report rows without a usable start or duration, or with absurd durations; returns the first count."""
    bad, huge, years, example = con.execute(
        "SELECT count(*) FILTER (WHERE start_ns IS NULL OR dur_us IS NULL), "
        "count(*) FILTER (WHERE start_ns IS NOT NULL AND dur_us IS NOT NULL AND end_ns IS NULL), "
        f"count(*) FILTER (WHERE dur_us >= {_EPOCH_LIKE_US}), min(dur_us) FILTER (WHERE dur_us >= {_EPOCH_LIKE_US}) "
        "FROM ops WHERE run_id = ?",
        [ctx.run_id],
    ).fetchall()[0]
    if years:
        ctx.report(
            path,
            "column dur_us",
            "warning",
            f"{years} rows have a duration of years (e.g. {example:.0f} us): a timestamp where the duration belongs",
            "the columns of those rows are shifted or hand-edited; re-export the file",
        )
    if bad:
        ctx.report(
            path,
            "",
            "warning",
            f"{bad} rows have no usable start time or duration; they are kept in ops but left out of timing analyses",
            "check for truncated or hand-edited rows",
        )
    if huge:
        ctx.report(
            path,
            "",
            "warning",
            f"{huge} rows have an absurdly large duration (their end is past the year "
            "2262); they are kept without an end time",
            "the export is corrupt there",
        )
    return bad


# A task of more than three years: an epoch timestamp in the duration column.
_EPOCH_LIKE_US = 1e14
# The ops rows ``_report_unusable_rows`` names (a read of many runs sends a run holding any to the careful path).
UNUSABLE_ROWS = f"start_ns IS NULL OR dur_us IS NULL OR end_ns IS NULL OR dur_us >= {_EPOCH_LIKE_US}"
# Epoch microseconds above this (year ~5138) are not microseconds: nanoseconds were written instead.
_MAX_EPOCH_US = 1e17


def _times_repeated(raw: str, columns: list[str]) -> int:
    """How often a header name appears: the reader names repeats ``<name>_1``, ``<name>_2``, ..."""
    n = 1
    while f"{raw}_{n}" in columns:
        n += 1
    return n


def _report_repeated_columns(path: Path, columns: list[str], ctx: ReadContext) -> None:
    """Identity columns that appear twice in the header (the first is read)."""
    for raw in sorted(h for h in _NON_METRIC if h in columns and _times_repeated(h, columns) > 1):
        ctx.report(
            path,
            "line 1",
            "warning",
            f"column {raw!r} appears {_times_repeated(raw, columns)} times; the first is read",
            "a hand-edited or merged file; remove the extra column",
        )


def _report_unread_columns(path: Path, columns: list[str], ctx: ReadContext) -> None:
    """Unknown columns past MAX_EXTRA_METRICS (a pathological header) are not read."""
    unknown = [c for c in columns if c not in _NON_METRIC and not is_pipe_column(normalize_metric(c))]
    if len(unknown) > MAX_EXTRA_METRICS:
        ctx.report(
            path,
            "line 1",
            "info",
            f"{len(unknown)} unknown columns: the first {MAX_EXTRA_METRICS} are kept in extra_metrics, "
            f"the rest (from {unknown[MAX_EXTRA_METRICS]!r}) are not read",
            "no rule reads unknown columns",
        )


def _report_ns_start_times(con: duckdb.DuckDBPyConnection, file: StreamedFile, ctx: ReadContext) -> None:
    """Start times whose magnitude says they are ns, not us (read again only when some start is unusable)."""
    start = next((h for h in _IDENTITY["start_ns"][0] if h in file.columns), None)
    if start is None:
        return
    count, smallest = select_text(
        con,
        file,
        f"SELECT count(*), min(x) FROM (SELECT TRY_CAST({v.text(start)} AS DOUBLE) AS x FROM {{scan}}) "
        f"WHERE x > {_MAX_EPOCH_US}",
    )
    if count:
        ctx.report(
            file.path,
            f"column {start!r}",
            "error",
            f"{count} start times are too large for epoch microseconds "
            f"(e.g. {smallest:.0f}): they look like nanoseconds; those rows get no start time",
            "the file was re-written with the wrong unit; re-export it or divide the column by 1000",
        )
