"""ai_(vector_)core_utilization_*.csv (msprof, sample-based) -> core_utilization, long format.

Header ``[Device_id,]Core ID,<metric columns>``, one row per core (``Core0``, ``Core1``, ...)
plus an ``Average`` row, aggregated over the whole collection window (not a time series).
Each metric cell becomes one row (core_kind, core_id, metric, value); ``N/A`` cells give no row.
Metric names are normalized: lower case, unit in the name (``mac_ratio``, ``aicore_time_us``).
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from analyzer.ingest import sql_values as v
from analyzer.ingest.csv.csv_columns import device_id
from analyzer.ingest.csv.csv_source import stream_csv
from analyzer.ingest.inserts import insert_params, insert_sql
from analyzer.ingest.model import ReadContext

_DEVICE_HEADERS = ("Device_id", "Device ID")
_CORE_HEADERS = ("Core ID", "Core Id", "Core")
_UNITS = (
    ("(us)", "_us"),
    ("(GB/s)", "_gb_per_s"),
    ("(KB)", "_kb"),
    ("(%)", "_pct"),
    ("(MB/s)", "_mb_per_s"),
)


def metric_name(raw: str) -> str:
    """Normalized metric name of a header.

    >>> metric_name("mte2_ratio"), metric_name("aicore_time(us)"), metric_name("ub_read_bw(GB/s)")
    ('mte2_ratio', 'aicore_time_us', 'ub_read_bw_gb_per_s')
    """
    name = raw.strip()
    for suffix, unit in _UNITS:
        if name.endswith(suffix):
            name = name[: -len(suffix)] + unit
            break
    return re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower()


def _long_sql(view: str, columns: list[str], core_header: str) -> str:
    device_header = next((h for h in _DEVICE_HEADERS if h in columns), None)
    device = device_id(device_header) if device_header else "NULL::INTEGER"
    metrics = [c for c in columns if c not in (*_DEVICE_HEADERS, *_CORE_HEADERS)]
    cells = ", ".join(f"{v.double(c)} AS {v.ident(metric_name(c))}" for c in metrics)
    wide = f"SELECT {device} AS device_id, {v.text(core_header)} AS core_id, {cells} FROM {view}"
    return (
        f"SELECT device_id, core_id, metric, value FROM ({wide}) "
        f"UNPIVOT (value FOR metric IN (COLUMNS(* EXCLUDE (device_id, core_id))))"
    )


def _load(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext, core_kind: str) -> int:
    constants = {"core_kind": core_kind}

    def statement(path: Path, columns: list[str], _first_row: list[str]) -> str | None:
        core_header = next((h for h in _CORE_HEADERS if h in columns), None)
        if core_header is None or not [c for c in columns if c not in (*_DEVICE_HEADERS, *_CORE_HEADERS)]:
            ctx.report(
                path,
                "line 1",
                "error",
                "header lacks required column 'Core ID' (or any metric column); file skipped",
                "expected a core utilization header ([Device_id,]Core ID,<metrics>)",
            )
            return None
        return insert_sql("core_utilization", _long_sql("{scan}", columns, core_header), constants)

    params = insert_params(ctx, constants)
    return sum(f.rows for f in stream_csv(con, paths, ctx, statement, params, _metric_types))


def _metric_types(columns: list[str]) -> dict[str, str]:
    """Every metric column is parsed as a number (a cell that is not one does not fit the header)."""
    return {c: "DOUBLE" for c in columns if c not in (*_DEVICE_HEADERS, *_CORE_HEADERS)}


def load_ai_core_utilization(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read ai_core_utilization files into core_utilization (core_kind 'aic')."""
    return _load(con, paths, ctx, "aic")


def load_ai_vector_core_utilization(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read ai_vector_core_utilization files into core_utilization (core_kind 'aiv')."""
    return _load(con, paths, ctx, "aiv")
