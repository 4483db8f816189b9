"""step_trace_*.csv (msprof, graph / iteration mode) -> the steps table (source 'step_trace').

Header ``Device_id,Iteration ID,FP Start(us),BP End(us),Iteration End(us),Iteration Time(us),
FP to BP Time(us),Iteration Refresh(us),Data Aug Bound(us),Model ID,Reduce Start(us),
Reduce Duration(us)[,Reduce Start(us),Reduce Duration(us)...]``. The repeated Reduce pair gives
duplicate header names (DuckDB suffixes them ``_1``, ...); only the fixed prefix is read, by name.
FP Start and Iteration End are absolute timestamps: start_ns / end_ns, exact. FP Start is
``N/A`` in offline inference; the step then starts Iteration Time before its end.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.ingest.csv.csv_columns import Field, load_csv_table
from analyzer.ingest.model import ReadContext

_FIELDS = (
    Field("device_id", ("Device_id", "Device ID"), "device"),
    Field("step_id", ("Iteration ID",), "bigint", required=True),
    Field("_fp_start_ns", ("FP Start(us)",), "ns", required=True),
    Field("end_ns", ("Iteration End(us)",), "ns", required=True),
    Field("iteration_time_us", ("Iteration Time(us)",), "double", required=True),
    Field("fp_bp_time_us", ("FP to BP Time(us)",), "double"),
    Field("data_aug_bound_us", ("Data Aug Bound(us)",), "double"),
)
_START_NS = "coalesce(_fp_start_ns, end_ns - CAST(round(iteration_time_us * 1000) AS BIGINT))"


def load_step_trace(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read step_trace files (all slices) into steps. Returns rows inserted."""
    return load_csv_table(
        con,
        paths,
        ctx,
        "steps",
        _FIELDS,
        "msprof step_trace (Iteration ID, FP Start(us), Iteration End(us), ...)",
        constants={"source": "step_trace"},
        derived={"start_ns": _START_NS},
    )
