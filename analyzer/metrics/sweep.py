"""The batch-size scaling table and verdict, as SQL views over catalog tables (shared with the rule judging scaling).

``SCALING_VIEW_SQL`` is THE definition: the ``sweep`` command creates it, and a rule file that
judges batch-size scaling reads ``batch_size_scaling`` / ``batch_size_scaling_verdict`` so that
both agree. ``model_name`` in the view is the run's model label (model_identity.py), so runs of
another model under the same name (another depth, other shapes) never join a sweep.

The verdict: when the device busy ratio rises with batch size by at least
``min_rise`` (default 0.10, absolute) or by the factor ``min_rise_factor`` (default 1.25),
small batches leave the device waiting on the host (scheduling
overhead); when it stays flat, the time is spent inside the operators.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from analyzer.metrics.model_identity import create_identity_table

MIN_RISE = 0.10
MIN_RISE_FACTOR = 1.25

SCALING_VIEW_SQL = """
CREATE OR REPLACE TEMP VIEW batch_size_scaling AS
SELECT coalesce(i.model_label, r.model_name) AS model_name, r.batch_size, r.run_id, r.cann_version, m.busy_ratio,
       coalesce(m.step_time_p50_us, m.span_us) AS step_time_us,
       coalesce(m.step_time_p50_us, m.span_us) / r.batch_size AS per_sample_us,
       r.batch_size / (coalesce(m.step_time_p50_us, m.span_us) / 1e6) AS throughput_samples_per_s
FROM catalog_runs r JOIN run_metrics m USING (run_id) LEFT JOIN run_model_identity i USING (run_id)
WHERE r.batch_size IS NOT NULL AND r.batch_size > 0 AND coalesce(m.step_time_p50_us, m.span_us) > 0
"""

VERDICT_VIEW_SQL = """
CREATE OR REPLACE TEMP VIEW batch_size_scaling_verdict AS
SELECT coalesce(model_name, '') AS model_name, count(*) AS run_count,
       min(batch_size) AS min_batch_size, max(batch_size) AS max_batch_size,
       arg_min(busy_ratio, batch_size) AS busy_ratio_at_min, arg_max(busy_ratio, batch_size) AS busy_ratio_at_max,
       arg_max(busy_ratio, batch_size) - arg_min(busy_ratio, batch_size) AS busy_ratio_rise,
       CASE WHEN count(DISTINCT batch_size) < 2 THEN 'not_enough_batch_sizes'
            WHEN arg_max(busy_ratio, batch_size) - arg_min(busy_ratio, batch_size) >= getvariable('min_rise')
              OR arg_max(busy_ratio, batch_size) >= getvariable('min_rise_factor') * arg_min(busy_ratio, batch_size)
            THEN 'scheduling_overhead' ELSE 'inside_operators' END AS verdict
FROM batch_size_scaling GROUP BY ALL ORDER BY model_name
"""

VERDICT_TEXT = {
    "scheduling_overhead": "device utilisation rises with batch size: small batches leave the NPU waiting on the "
    "host (launch / scheduling overhead); larger batches, graph mode or fewer, fused "
    "operators help",
    "inside_operators": "device utilisation stays flat with batch size: the time is spent inside the operators; "
    "tune the hot operators (see the run reports)",
    "not_enough_batch_sizes": "only one batch size: nothing to compare",
}


def create_scaling_views(
    con: duckdb.DuckDBPyConnection, min_rise: float = MIN_RISE, min_rise_factor: float = MIN_RISE_FACTOR
) -> None:
    """Create the two views in a connection holding catalog tables; runs are grouped by model
    identity (model_identity.py: name, op mix, shapes), never by name or folder alone."""
    create_identity_table(con)
    con.execute("SET VARIABLE min_rise = ?", [min_rise])
    con.execute("SET VARIABLE min_rise_factor = ?", [min_rise_factor])
    con.execute(SCALING_VIEW_SQL)
    con.execute(VERDICT_VIEW_SQL)


def scaling_tables(con: duckdb.DuckDBPyConnection, model: str | None = None) -> tuple[pa.Table, pa.Table]:
    """(the scaling rows by model and batch size, the verdict per model), optionally for one model."""
    where = "WHERE coalesce(model_name, '') = $m" if model is not None else ""
    params = {"m": model} if model is not None else None
    rows = con.sql(
        f"SELECT * FROM batch_size_scaling {where} ORDER BY model_name, batch_size, run_id", params=params
    ).to_arrow_table()
    verdict = con.sql(f"SELECT * FROM batch_size_scaling_verdict {where}", params=params).to_arrow_table()
    return rows, verdict
