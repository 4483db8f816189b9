"""The sweep's batch-size scaling views (analyzer/metrics/sweep.py) over the normalized tables.

The sweep command builds ``batch_size_scaling`` from catalog tables (``catalog_runs``,
``run_metrics``). Here the same two inputs are made from the normalized tables of the runs being
judged, with the catalog's own per-run metrics SQL (analyzer/metrics/summary.py), so that the
rule judging batch-size scaling and ``npu-triage sweep`` share one definition.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from analyzer.metrics.summary import runs_summary_tables
from analyzer.metrics.sweep import create_scaling_views
from analyzer.rule_engine.views import create_views

_RUNS_VIEW = "CREATE OR REPLACE TEMP VIEW catalog_runs AS SELECT run_id, model_name, batch_size, cann_version FROM runs"


def _is_base_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    rows = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = ? AND NOT temporary", [name]
    ).fetchall()  # fetchall, not fetchone: leaves no unfinished result on con
    return bool(rows[0][0])


def create_run_scaling_views(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> None:
    """Create ``batch_size_scaling`` (and its verdict view) over the runs ``run_ids`` of ``con``.

    Does nothing in a catalog database, whose own ``catalog_runs`` / ``run_metrics`` tables
    already feed the views.
    """
    if _is_base_table(con, "catalog_runs") or _is_base_table(con, "run_metrics"):
        create_scaling_views(con)
        return
    # on con itself, not a cursor: a cursor is another connection, which does not see con's helper TEMP tables
    create_views(con)
    # one query per summary table for all the runs (the catalog's ``runs_summary_tables``), not five per run
    by_run = runs_summary_tables(con, [(r, r) for r in run_ids])
    summaries = [by_run[r] for r in run_ids]
    metrics = [t["run_metrics"] for t in summaries]
    con.register("run_metrics", pa.concat_tables(metrics) if metrics else pa.table({}))
    # the op sequence of a typical step: the model identity that groups runs (metrics/model_identity.py)
    positions = [t["op_positions"] for t in summaries]
    if positions:
        con.register("op_positions", pa.concat_tables(positions))
    con.execute(_RUNS_VIEW)
    create_scaling_views(con)
