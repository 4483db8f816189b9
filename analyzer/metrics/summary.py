"""SQL that turns one ingested run (the normalized tables) into its catalog rows, as Arrow tables."""

from __future__ import annotations

from contextlib import nullcontext

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analyzer.duckdb_connect import fixed_order
from analyzer.ingest.sql_values import IN_RUNS

# Parameters bound in every query: $runs (the ingest run ids); each table's rows are sorted by run_id first,
# then as one run's own rows are, and their run_id (the ingest one) becomes the catalog one per run.
_LABEL = "coalesce(op_type, '[' || coalesce(task_type, '?') || ']')"

OP_TYPE_STATS_SQL = f"""
SELECT run_id, {_LABEL} AS op_type, count(*) AS launch_count, sum(dur_us) AS total_dur_us,
       avg(dur_us) AS mean_dur_us, sum(core_time_us) AS core_time_us, sum(mte_time_us) AS mte_time_us
FROM ops WHERE {IN_RUNS} AND dur_us IS NOT NULL
GROUP BY ALL ORDER BY run_id, total_dur_us DESC, op_type
"""

OP_TYPE_STEP_STATS_SQL = f"""
SELECT run_id, step_id, {_LABEL} AS op_type, count(*) AS launch_count, sum(dur_us) AS total_dur_us
FROM ops WHERE {IN_RUNS} AND dur_us IS NOT NULL
GROUP BY ALL ORDER BY run_id, step_id NULLS FIRST, op_type
"""

STEP_TIMES_SQL = f"""
WITH from_steps AS (
    -- THE step time: the diagnosis's step window (_time_windows: the export's stage length where it
    -- decomposes the step, else the step's timestamps), so diagnose, diff, sweep and runs print one value
    SELECT run_id, step_id, max(span_us) AS step_us
    FROM _time_windows WHERE {IN_RUNS} AND basis = 'step' AND step_id IS NOT NULL
    GROUP BY run_id, step_id
), from_ops AS (
    SELECT run_id, step_id, (max(end_ns) - min(start_ns)) / 1000.0 AS extent_us, sum(core_time_us) AS core_us,
           sum(cube_time_us) AS cube_us, sum(vector_time_us) AS vector_us,
           sum(scalar_time_us) AS scalar_us, sum(mte_time_us) AS mte_us
    FROM ops WHERE {IN_RUNS} AND start_ns IS NOT NULL GROUP BY run_id, step_id
)
SELECT o.run_id, o.step_id,
       CASE WHEN o.step_id IS NULL THEN NULL ELSE coalesce(s.step_us, o.extent_us) END AS step_time_us,
       o.core_us AS core_time_us, o.cube_us AS cube_time_us, o.vector_us AS vector_time_us,
       o.scalar_us AS scalar_time_us, o.mte_us AS mte_time_us
FROM from_ops o LEFT JOIN from_steps s ON s.run_id = o.run_id AND s.step_id = o.step_id
ORDER BY o.run_id, o.step_id NULLS FIRST
"""

OP_POSITIONS_SQL = f"""
WITH o AS (
    SELECT run_id, coalesce(step_id, -1) AS sk, {_LABEL} AS label, op_name_norm AS norm, input_shapes, dur_us,
           row_number() OVER (PARTITION BY run_id, step_id ORDER BY start_ns, stream_id, task_id, op_name) - 1
               AS ordinal
    FROM _tasks WHERE {IN_RUNS} AND start_ns IS NOT NULL
), per_step AS (SELECT run_id, sk, count(*) AS n FROM o GROUP BY run_id, sk),
typical AS (  -- per run, the most common count of tasks in a step (the larger on a tie)
    SELECT run_id, n FROM per_step GROUP BY run_id, n
    QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY count(*) DESC, n DESC) = 1
), kept AS (SELECT run_id, sk FROM per_step JOIN typical USING (run_id, n))
SELECT run_id, ordinal, first(label ORDER BY sk) AS op_type, first(norm ORDER BY sk) AS op_name_norm,
       first(input_shapes ORDER BY sk) AS input_shapes, count(*) AS step_count, median(dur_us) AS dur_us_median
FROM o SEMI JOIN kept USING (run_id, sk)
GROUP BY run_id, ordinal ORDER BY run_id, ordinal
"""

RUN_METRICS_SQL = f"""
WITH wanted AS (SELECT unnest($runs::VARCHAR[]) AS run_id),
tasks AS (SELECT run_id, count(*) AS task_count FROM ops WHERE {IN_RUNS} GROUP BY run_id),
busy AS (SELECT run_id, max(span_us) AS span_us, max(busy_us) AS busy_us, max(busy_ratio) AS busy_ratio
         FROM _run_busy WHERE {IN_RUNS} GROUP BY run_id),
st AS (SELECT run_id, count(*) AS step_count, avg(step_time_us) AS step_time_mean_us,
              stddev_samp(step_time_us) AS step_time_std_us, median(step_time_us) AS step_time_p50_us,
              max(step_time_us) AS step_time_max_us
       FROM step_times_rows WHERE step_time_us IS NOT NULL GROUP BY run_id),
total AS (SELECT run_id, sum(total_dur_us) AS t FROM op_type_rows GROUP BY run_id),
top AS (SELECT run_id, list(op_type ORDER BY total_dur_us DESC, op_type) AS types,
               list(total_dur_us / nullif(t, 0) ORDER BY total_dur_us DESC, op_type) AS shares
        FROM (SELECT * FROM op_type_rows
              QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY total_dur_us DESC, op_type) <= 5)
        JOIN total USING (run_id) GROUP BY run_id)
SELECT run_id, span_us, busy_us, busy_ratio, coalesce(task_count, 0) AS task_count,
       coalesce(step_count, 0) AS step_count, step_time_mean_us, step_time_std_us, step_time_p50_us,
       step_time_max_us, coalesce(top.types, []) AS top_op_types, coalesce(top.shares, []) AS top_op_type_shares
FROM wanted LEFT JOIN tasks USING (run_id) LEFT JOIN busy USING (run_id) LEFT JOIN st USING (run_id)
LEFT JOIN top USING (run_id)
ORDER BY run_id
"""

_QUERIES = {
    "op_type_stats": OP_TYPE_STATS_SQL,
    "op_type_step_stats": OP_TYPE_STEP_STATS_SQL,
    "step_times": STEP_TIMES_SQL,
    "op_positions": OP_POSITIONS_SQL,
}


def run_summary_tables(con: duckdb.DuckDBPyConnection, ingest_run_id: str, catalog_run_id: str) -> dict[str, pa.Table]:
    """op_type_stats, op_type_step_stats, step_times, op_positions and run_metrics of one run.

    run_metrics' span and busy time are the helper view ``_run_busy`` (the one definition of busy, shared
    with the rules and the diagnosis) and each step's time is its window of the time breakdown
    (``_time_windows``): ``con`` must hold the helper views (rule_engine.views.create_views).
    """
    return runs_summary_tables(con, [(ingest_run_id, catalog_run_id)])[ingest_run_id]


def runs_summary_tables(con: duckdb.DuckDBPyConnection, runs: list[tuple[str, str]]) -> dict[str, dict[str, pa.Table]]:
    """``run_summary_tables`` of every (ingest run id, catalog run id) of ``runs``, keyed by ingest run id:
    one query per table for all of them, each run's rows then split off."""
    params = {"runs": [rid for rid, _ in runs]}
    # Several runs: one thread, so that each run's rows reach every float sum in the order its own query adds
    # them (a worker of a batch runs on one thread anyway); one run keeps DuckDB's threads.
    with fixed_order(con) if len(runs) > 1 else nullcontext():
        tables = {name: con.sql(sql, params=params).to_arrow_table() for name, sql in _QUERIES.items()}
        con.register("step_times_rows", tables["step_times"])
        con.register("op_type_rows", tables["op_type_stats"])
        try:
            tables["run_metrics"] = con.sql(RUN_METRICS_SQL, params=params).to_arrow_table()
        finally:
            con.unregister("step_times_rows")
            con.unregister("op_type_rows")
    split = {name: _by_run(table) for name, table in tables.items()}
    return {
        rid: {name: _as_run(rows.get(rid, tables[name].schema.empty_table()), cid) for name, rows in split.items()}
        for rid, cid in runs
    }


def _by_run(table: pa.Table) -> dict[str, pa.Table]:
    """Each run's rows of a table sorted by run_id first, in their order: copies, not slices, since a slice
    keeps (and a pickle carries) the buffers of every run."""
    counts = pc.value_counts(table.column("run_id"))
    found, start = {}, 0
    for rid, n in zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist(), strict=True):
        found[rid], start = table.take(np.arange(start, start + n)), start + n
    return found


def _as_run(rows: pa.Table, cid: str) -> pa.Table:
    """One run's rows with its catalog id ``cid`` as run_id."""
    return rows.set_column(0, "run_id", pa.repeat(pa.scalar(cid, pa.string()), rows.num_rows))
