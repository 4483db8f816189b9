"""Chart-ready tables of the all-runs report, from the views that the rules comparing runs judge."""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb

from analyzer.ingest.sql_values import IN_RUNS
from analyzer.rule_engine.scaling_views import create_run_scaling_views

if TYPE_CHECKING:  # DuckDB loads pyarrow when the rows are fetched: a one-run report never does
    import pyarrow as pa


def _has_view(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    rows = con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [name]).fetchall()
    return bool(rows[0][0])


def scaling_rows(con: duckdb.DuckDBPyConnection, run_ids: list[str], subject: str) -> pa.Table:
    """The rows of ``batch_size_scaling`` (what the rule judging scaling reads) of one finding's model.

    Args:
        con: the connection the rule ran in (the view is created over ``run_ids`` when absent).
        run_ids: the runs compared.
        subject: the finding's subject: the model name, or 'unnamed model' (the rule's name for
            runs without one).
    Returns:
        model_name, batch_size, run_id, busy_ratio, step_time_us, per_sample_us,
        throughput_samples_per_s, by batch size.
    """
    if not _has_view(con, "batch_size_scaling"):
        create_run_scaling_views(con, run_ids)
    return con.sql(
        "SELECT model_name, batch_size, run_id, busy_ratio, step_time_us, per_sample_us, "
        "throughput_samples_per_s FROM batch_size_scaling "
        f"WHERE {IN_RUNS} "
        "AND CASE WHEN coalesce(model_name, '') = '' THEN 'unnamed model' ELSE model_name END "
        "= $subject ORDER BY batch_size, run_id",
        params={"runs": list(run_ids), "subject": subject},
    ).to_arrow_table()
