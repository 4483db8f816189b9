"""Per operator family against the roofline: bytes moved and operations done per type, from the
Memory and ArithmeticUtilization metric groups (ops.extra_metrics), against the chip's peaks.

The Memory group gives each task's main-memory read and write bandwidth over its core time, so
bytes = bandwidth x core time; the ArithmeticUtilization group gives its cube and vector operations
(``*_fops``). The chip's HBM bandwidth and cube FP16 peak come from the chip table (_run_nominal).
An msprof run collects one metric group, so a run usually has one side of the roofline: the table
says which group to collect for the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from analyzer.report.series import _query

if TYPE_CHECKING:  # DuckDB is the main process's: a report worker draws pages from the series read for it
    import duckdb

# main-memory bandwidth (GB/s) x core time (us) = KB moved (1e9 B/s x 1e-6 s = 1e3 B)
_SQL = """
WITH t AS (
    SELECT coalesce(op_type, op_name, '(unnamed)') AS op_type, dur_us, extra_metrics AS m,
           coalesce(aicore_time_us, 0) AS aic_us, coalesce(aiv_time_us, 0) AS aiv_us
    FROM _compute_tasks WHERE run_id = $run AND dur_us > 0 AND extra_metrics IS NOT NULL
),
per_task AS (
    SELECT op_type, dur_us,
           (coalesce(m['aic_main_mem_read_bw_gb_per_s'], 0)
            + coalesce(m['aic_main_mem_write_bw_gb_per_s'], 0)) * aic_us
           + (coalesce(m['aiv_main_mem_read_bw_gb_per_s'], 0)
              + coalesce(m['aiv_main_mem_write_bw_gb_per_s'], 0)) * aiv_us AS moved_kb,
           m['aic_main_mem_read_bw_gb_per_s'] IS NOT NULL
               OR m['aiv_main_mem_read_bw_gb_per_s'] IS NOT NULL AS has_bytes,
           coalesce(m['aic_cube_fops'], 0) + coalesce(m['aiv_cube_fops'], 0) + coalesce(m['aic_vector_fops'], 0)
           + coalesce(m['aiv_vector_fops'], 0) AS fops,
           m['aic_cube_fops'] IS NOT NULL OR m['aiv_vector_fops'] IS NOT NULL
               OR m['aic_vector_fops'] IS NOT NULL AS has_fops
    FROM t
),
fam AS (
    SELECT op_type, count(*) AS launches, sum(dur_us) AS time_us,
           CASE WHEN bool_or(has_bytes) THEN sum(moved_kb) / 1024 END AS moved_mb,
           CASE WHEN bool_or(has_fops) THEN sum(fops) END AS fops
    FROM per_task GROUP BY op_type HAVING bool_or(has_bytes) OR bool_or(has_fops)
)
SELECT f.op_type, f.launches, round(f.time_us, 3) AS time_us, round(f.moved_mb, 3) AS moved_mb,
       round(f.fops / 1e9, 6) AS gflop,
       round(f.moved_mb * 1.048576 / f.time_us, 4) AS achieved_gb_per_s,
       round(f.moved_mb * 1.048576 / f.time_us / n.hbm_gb_per_s, 6) AS bandwidth_share,
       round(f.fops / f.time_us / 1e6 / n.cube_tflops, 6) AS compute_share,
       round(f.fops / nullif(f.moved_mb * 1048576, 0), 4) AS flop_per_byte,
       round(n.cube_tflops * 1e12 / (n.hbm_gb_per_s * 1e9), 2) AS ridge_flop_per_byte,
       round(greatest(coalesce(f.moved_mb * 1.048576 / n.hbm_gb_per_s * 1e3, 0),
                      coalesce(f.fops / (n.cube_tflops * 1e6), 0)), 3) AS attainable_us,
       n.hbm_gb_per_s, n.cube_tflops
FROM fam f, _run_nominal n WHERE n.run_id = $run
ORDER BY f.time_us DESC, f.op_type LIMIT $top
"""


def roofline_families(con: duckdb.DuckDBPyConnection, run_id: str, top_n: int = 15) -> pl.DataFrame:
    """The ``top_n`` operator types by time that carry Memory or ArithmeticUtilization metrics.

    Columns: op_type, launches, time_us, moved_mb (NULL without the Memory group), gflop (NULL without
    ArithmeticUtilization), achieved_gb_per_s, bandwidth_share (of the chip's HBM peak), compute_share
    (of the cube FP16 peak), flop_per_byte (arithmetic intensity; NULL unless both groups), the chip's
    ridge point, attainable_us (the time at the peaks: the larger of bytes / bandwidth and operations /
    compute), hbm_gb_per_s, cube_tflops. Empty when neither group was collected.
    """
    return _query(con, _SQL, {"run": run_id, "top": top_n}, "time_us DESC, op_type")


def verdict(bandwidth_share: float | None, compute_share: float | None) -> str:
    """What a family's place against the roofline says, in a few words.

    >>> verdict(0.82, None)
    'memory-bound at 82% of peak bandwidth: move fewer bytes'
    >>> verdict(0.2, 0.05)
    'at 20% of peak bandwidth and 5% of peak compute: access pattern or latency'
    """
    if bandwidth_share is not None and bandwidth_share >= 0.6:
        return f"memory-bound at {bandwidth_share:.0%} of peak bandwidth: move fewer bytes"
    if compute_share is not None and compute_share >= 0.6:
        return f"compute-bound at {compute_share:.0%} of peak"
    if bandwidth_share is not None and compute_share is not None:
        return (
            f"at {bandwidth_share:.0%} of peak bandwidth and {compute_share:.0%} of peak compute: "
            "access pattern or latency"
        )
    if bandwidth_share is not None:
        return f"at {bandwidth_share:.0%} of peak bandwidth: if memory-bound (MTE share), the access pattern"
    return f"at {compute_share:.0%} of peak compute" if compute_share is not None else ""
