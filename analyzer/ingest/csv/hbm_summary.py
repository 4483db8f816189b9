"""hbm_*.csv and ddr_*.csv (msprof) -> the bandwidth_summary table: per-unit bandwidth averages.

Header ``[Device_id,]Metric,Read(MB/s),Write(MB/s)``; ``Metric`` is the memory unit id (``0``,
``1``, ...) or ``Average``. These are averages over the collection window, not a time series,
so they do not go to counters.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.ingest.csv.csv_columns import Field, load_csv_table
from analyzer.ingest.model import ReadContext

_FIELDS = (
    Field("device_id", ("Device_id", "Device ID"), "device"),
    Field("unit_id", ("Metric",), "text", required=True),
    Field("read_mb_per_s", ("Read(MB/s)",), "double", required=True),
    Field("write_mb_per_s", ("Write(MB/s)",), "double", required=True),
)
_EXPECTED = "{} ([Device_id,]Metric, Read(MB/s), Write(MB/s))"


def load_hbm(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read hbm files into bandwidth_summary (memory 'HBM'). Returns rows inserted."""
    return load_csv_table(
        con,
        paths,
        ctx,
        "bandwidth_summary",
        _FIELDS,
        _EXPECTED.format("hbm"),
        constants={"memory": "HBM"},
    )


def load_ddr(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read ddr files into bandwidth_summary (memory 'DDR'). Returns rows inserted."""
    return load_csv_table(
        con,
        paths,
        ctx,
        "bandwidth_summary",
        _FIELDS,
        _EXPECTED.format("ddr"),
        constants={"memory": "DDR"},
    )
