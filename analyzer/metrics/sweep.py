"""The batch-size scaling table and verdict: the documented views of scaling.sql over catalog tables.

They are THE definition: the ``sweep`` command creates them, and a rule file that judges batch-size
scaling reads ``batch_size_scaling`` / ``batch_size_scaling_verdict``, so that both agree. The
verdict's thresholds: ``min_rise`` (default 0.10, absolute) and ``min_rise_factor`` (default 1.25).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import duckdb
import pyarrow as pa

from analyzer.metrics.model_identity import create_identity_table
from analyzer.sql_modules import SqlDefinition, parse_module

MIN_RISE = 0.10
MIN_RISE_FACTOR = 1.25

VERDICT_TEXT = {
    "scheduling_overhead": "device utilisation rises with batch size: small batches leave the NPU waiting on the "
    "host (launch / scheduling overhead); larger batches, graph mode or fewer, fused "
    "operators help",
    "inside_operators": "device utilisation stays flat with batch size: the time is spent inside the operators; "
    "tune the hot operators (see the run reports)",
    "not_enough_batch_sizes": "only one batch size: nothing to compare",
}


@cache
def scaling_definitions() -> tuple[SqlDefinition, ...]:
    """The views of scaling.sql (batch_size_scaling, then its verdict), with their docs."""
    text = resources.files(__package__).joinpath("scaling.sql").read_text(encoding="utf-8")
    return tuple(parse_module(text, "scaling", typed=True)[1])


def create_scaling_views(
    con: duckdb.DuckDBPyConnection, min_rise: float = MIN_RISE, min_rise_factor: float = MIN_RISE_FACTOR
) -> None:
    """Create the two views in a connection holding catalog tables; runs are grouped by model
    identity (model_identity.py: name, op mix, shapes), never by name or folder alone."""
    create_identity_table(con)
    con.execute("SET VARIABLE min_rise = ?", [min_rise])
    con.execute("SET VARIABLE min_rise_factor = ?", [min_rise_factor])
    for definition in scaling_definitions():
        con.execute(definition.create_statement())


def scaling_tables(con: duckdb.DuckDBPyConnection, model: str | None = None) -> tuple[pa.Table, pa.Table]:
    """(the scaling rows by model and batch size, the verdict per model), optionally for one model."""
    where = "WHERE coalesce(model_name, '') = $m" if model is not None else ""
    params = {"m": model} if model is not None else None
    rows = con.sql(
        f"SELECT * FROM batch_size_scaling {where} ORDER BY model_name, batch_size, run_id", params=params
    ).to_arrow_table()
    verdict = con.sql(f"SELECT * FROM batch_size_scaling_verdict {where}", params=params).to_arrow_table()
    return rows, verdict
