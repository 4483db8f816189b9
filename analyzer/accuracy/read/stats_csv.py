"""Statistics dumps (`dump_data: stats`): one CSV per operator, a row per input/output tensor."""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.accuracy.read.dump_names import DumpName
from analyzer.accuracy.read.problems import ReadProblems
from analyzer.errors import first_line

# raw header -> normalized column of tensor_stats
STATS_COLUMNS = {
    "Input/Output": "slot",
    "Index": "slot_index",
    "Data Size": "size_bytes",
    "Data Type": "dtype",
    "Format": "format",
    "Shape": "shape",
    "Max Value": "max_value",
    "Min Value": "min_value",
    "Avg Value": "avg_value",
    "Count": "element_count",
    "Nan Count": "nan_count",
    "Negative Inf Count": "neg_inf_count",
    "Positive Inf Count": "pos_inf_count",
}
_TYPES = {"slot_index": "BIGINT", "size_bytes": "BIGINT", "element_count": "BIGINT", "nan_count": "BIGINT"}
_TYPES |= {"neg_inf_count": "BIGINT", "pos_inf_count": "BIGINT"}
_TYPES |= {"max_value": "DOUBLE", "min_value": "DOUBLE", "avg_value": "DOUBLE"}


def stats_select(con: duckdb.DuckDBPyConnection, path: Path, name: DumpName, problems: ReadProblems):
    """The rows of one stats CSV as a DuckDB relation of tensor_stats columns (less run_id and side)."""
    try:
        rel = con.read_csv(str(path), header=True, all_varchar=True)
    except (duckdb.Error, OSError) as exc:
        problems.error(path, "file", f"not a readable stats CSV ({first_line(exc)})")
        return None
    missing = [c for c in STATS_COLUMNS if c not in rel.columns]
    if missing:
        problems.error(path, "header", f"stats CSV lacks column(s) {', '.join(missing)}")
        return None
    cols = [
        f'TRY_CAST("{raw}" AS {_TYPES[col]}) AS {col}' if col in _TYPES else f'lower("{raw}") AS {col}'
        for raw, col in STATS_COLUMNS.items()
    ]
    meta = f"'{_quote(name.op_name)}' AS op_name, '{_quote(name.op_type)}' AS op_type, "
    meta += f"{name.task_id} AS task_id, {name.timestamp_us} AS timestamp_us, '{_quote(path.name)}' AS source_file"
    return rel.select(f"{meta}, {', '.join(cols)}")


def _quote(text: str) -> str:
    return text.replace("'", "''")
