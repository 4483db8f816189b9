"""SQL that turns one ingested run (the normalized tables) into its catalog rows, as Arrow tables."""

from __future__ import annotations

import duckdb
import pyarrow as pa

# Parameters bound in every query: $rid (ingest run id), $cid (catalog run id).
_LABEL = "coalesce(op_type, '[' || coalesce(task_type, '?') || ']')"

OP_TYPE_STATS_SQL = f"""
SELECT $cid AS run_id, {_LABEL} AS op_type, count(*) AS launch_count, sum(dur_us) AS total_dur_us,
       avg(dur_us) AS mean_dur_us, sum(core_time_us) AS core_time_us, sum(mte_time_us) AS mte_time_us
FROM ops WHERE run_id = $rid AND dur_us IS NOT NULL
GROUP BY ALL ORDER BY total_dur_us DESC, op_type
"""

OP_TYPE_STEP_STATS_SQL = f"""
SELECT $cid AS run_id, step_id, {_LABEL} AS op_type, count(*) AS launch_count, sum(dur_us) AS total_dur_us
FROM ops WHERE run_id = $rid AND dur_us IS NOT NULL
GROUP BY ALL ORDER BY step_id NULLS FIRST, op_type
"""

STEP_TIMES_SQL = """
WITH from_steps AS (
    -- THE step time: the diagnosis's step window (_time_windows: the export's stage length where it
    -- decomposes the step, else the step's timestamps), so diagnose, diff, sweep and runs print one value
    SELECT step_id, max(span_us) AS step_us
    FROM _time_windows WHERE run_id = $rid AND basis = 'step' AND step_id IS NOT NULL
    GROUP BY step_id
), from_ops AS (
    SELECT step_id, (max(end_ns) - min(start_ns)) / 1000.0 AS extent_us, sum(core_time_us) AS core_us,
           sum(cube_time_us) AS cube_us, sum(vector_time_us) AS vector_us,
           sum(scalar_time_us) AS scalar_us, sum(mte_time_us) AS mte_us
    FROM ops WHERE run_id = $rid AND start_ns IS NOT NULL GROUP BY step_id
)
SELECT $cid AS run_id, o.step_id,
       CASE WHEN o.step_id IS NULL THEN NULL ELSE coalesce(s.step_us, o.extent_us) END AS step_time_us,
       o.core_us AS core_time_us, o.cube_us AS cube_time_us, o.vector_us AS vector_time_us,
       o.scalar_us AS scalar_time_us, o.mte_us AS mte_time_us
FROM from_ops o LEFT JOIN from_steps s USING (step_id)
ORDER BY o.step_id NULLS FIRST
"""

OP_POSITIONS_SQL = f"""
WITH o AS (
    SELECT coalesce(step_id, -1) AS sk, {_LABEL} AS label, op_name_norm AS norm, input_shapes, dur_us,
           row_number() OVER (PARTITION BY step_id ORDER BY start_ns, stream_id, task_id, op_name) - 1 AS ordinal
    FROM _tasks WHERE run_id = $rid AND start_ns IS NOT NULL
), per_step AS (SELECT sk, count(*) AS n FROM o GROUP BY sk),
typical AS (SELECT n FROM per_step GROUP BY n ORDER BY count(*) DESC, n DESC LIMIT 1)
SELECT $cid AS run_id, ordinal, first(label ORDER BY sk) AS op_type, first(norm ORDER BY sk) AS op_name_norm,
       first(input_shapes ORDER BY sk) AS input_shapes, count(*) AS step_count, median(dur_us) AS dur_us_median
FROM o WHERE sk IN (SELECT sk FROM per_step WHERE n = (SELECT n FROM typical))
GROUP BY ordinal ORDER BY ordinal
"""

RUN_METRICS_SQL = """
WITH tasks AS (SELECT count(*) AS task_count FROM ops WHERE run_id = $rid),
busy AS (SELECT max(span_us) AS span_us, max(busy_us) AS busy_us, max(busy_ratio) AS busy_ratio
         FROM _run_busy WHERE run_id = $rid),
st AS (SELECT * FROM step_times_rows WHERE step_time_us IS NOT NULL),
total AS (SELECT sum(total_dur_us) AS t FROM op_type_rows),
top AS (SELECT list(op_type ORDER BY total_dur_us DESC, op_type) AS types,
               list(total_dur_us / nullif((SELECT t FROM total), 0) ORDER BY total_dur_us DESC, op_type) AS shares
        FROM (SELECT * FROM op_type_rows ORDER BY total_dur_us DESC, op_type LIMIT 5))
SELECT $cid AS run_id, span_us, busy_us, busy_ratio, task_count,
       (SELECT count(*) FROM st) AS step_count,
       (SELECT avg(step_time_us) FROM st) AS step_time_mean_us,
       (SELECT stddev_samp(step_time_us) FROM st) AS step_time_std_us,
       (SELECT median(step_time_us) FROM st) AS step_time_p50_us,
       (SELECT max(step_time_us) FROM st) AS step_time_max_us,
       coalesce(top.types, []) AS top_op_types, coalesce(top.shares, []) AS top_op_type_shares
FROM tasks, busy, top
"""


def run_summary_tables(con: duckdb.DuckDBPyConnection, ingest_run_id: str, catalog_run_id: str) -> dict[str, pa.Table]:
    """op_type_stats, op_type_step_stats, step_times, op_positions and run_metrics of one run.

    run_metrics' span and busy time are the helper view ``_run_busy`` (the one definition of busy, shared
    with the rules and the diagnosis) and each step's time is its window of the time breakdown
    (``_time_windows``): ``con`` must hold the helper views (rule_engine.views.create_views).
    """
    params = {"rid": ingest_run_id, "cid": catalog_run_id}
    tables = {
        "op_type_stats": con.sql(OP_TYPE_STATS_SQL, params=params).to_arrow_table(),
        "op_type_step_stats": con.sql(OP_TYPE_STEP_STATS_SQL, params=params).to_arrow_table(),
        "step_times": con.sql(STEP_TIMES_SQL, params=params).to_arrow_table(),
        "op_positions": con.sql(OP_POSITIONS_SQL, params=params).to_arrow_table(),
    }
    con.register("step_times_rows", tables["step_times"])
    con.register("op_type_rows", tables["op_type_stats"])
    try:
        tables["run_metrics"] = con.sql(RUN_METRICS_SQL, params=params).to_arrow_table()
    finally:
        con.unregister("step_times_rows")
        con.unregister("op_type_rows")
    return tables
