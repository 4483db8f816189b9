"""Per-rank and per-link numbers of a job, per step: what the catalog keeps and what a job diff compares."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from analyzer.duckdb_connect import fixed_order

_RANKS = """
WITH w AS (SELECT rank, sum(wait_us) / greatest(count(DISTINCT step_id), 1) AS wait_us,
                  sum(transit_us) / greatest(count(DISTINCT step_id), 1) AS transit_us
           FROM job_comm_ops WHERE run_id = $job GROUP BY rank),
s AS (SELECT rank, avg(stage_us) AS stage_us, avg(computing_us) AS computing_us,
             avg(comm_not_overlapped_us) AS comm_not_overlapped_us, avg(free_us) AS free_us
      FROM job_steps WHERE run_id = $job GROUP BY rank)
SELECT $id AS job_id, r.rank, r.pp_stage, s.stage_us, s.computing_us, s.comm_not_overlapped_us, s.free_us,
       w.wait_us, w.transit_us
FROM job_ranks r LEFT JOIN s USING (rank) LEFT JOIN w USING (rank) WHERE r.run_id = $job ORDER BY r.rank
"""
# Both directions of a rank pair together, the per-op-type totals of the matrices (every entry when a
# file has none), LOCAL copies and links of unknown ranks left out: the links the job rules judge.
_LINKS = """
WITH l AS (SELECT * FROM job_links WHERE run_id = $job AND transport <> 'LOCAL' AND src_rank IS NOT NULL
              AND dst_rank IS NOT NULL AND src_rank <> dst_rank AND transit_us > 0
              AND (matrix_op LIKE '%-total'
                   OR NOT EXISTS (SELECT 1 FROM job_links WHERE run_id = $job AND matrix_op LIKE '%-total')))
SELECT $id AS job_id, least(src_rank, dst_rank) AS rank_a, greatest(src_rank, dst_rank) AS rank_b, transport,
       sum(transit_size_mb) / count(DISTINCT step_id) AS transit_size_mb,
       sum(transit_us) / count(DISTINCT step_id) AS transit_us,
       sum(transit_size_mb) / (sum(transit_us) / 1000) AS bandwidth_gb_per_s
FROM l GROUP BY ALL ORDER BY rank_a, rank_b, transport
"""


def rank_metrics(con: duckdb.DuckDBPyConnection, job_id: str, label: str) -> pa.Table:
    """Per rank the step-trace parts and the communication wait and transit, means per step."""
    with fixed_order(con):
        return con.sql(_RANKS, params={"job": job_id, "id": label}).to_arrow_table()


def link_metrics(con: duckdb.DuckDBPyConnection, job_id: str, label: str) -> pa.Table:
    """Per rank pair and transport the data, transit time and bandwidth per step."""
    with fixed_order(con):
        return con.sql(_LINKS, params={"job": job_id, "id": label}).to_arrow_table()
