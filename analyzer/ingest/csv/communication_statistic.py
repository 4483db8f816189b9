"""communication_statistic_*.csv (msprof) -> op_stats rows with core_type 'COMMUNICATION'.

Header ``[Device_id,]OP Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)``
(from msprof's export config and docs; no real file seen).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.ingest.csv.csv_columns import load_csv_table
from analyzer.ingest.csv.op_statistic import STAT_FIELDS
from analyzer.ingest.model import ReadContext


def load_communication_statistic(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read communication_statistic files into op_stats (core_type 'COMMUNICATION')."""
    return load_csv_table(
        con,
        paths,
        ctx,
        "op_stats",
        STAT_FIELDS,
        "communication_statistic (OP Type, Count, Total Time(us), ...)",
        constants={"core_type": "COMMUNICATION"},
    )
