"""Compare two jobs: the job step time, every rank's step and every link's bandwidth, base against new."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from analyzer.duckdb_connect import connect_offline, fixed_order
from analyzer.ingest.database import connect
from analyzer.ingest.metadata.discover import discover
from analyzer.job.grouping import Job, find_jobs
from analyzer.job.metrics import link_metrics, rank_metrics
from analyzer.job.tables import load_job


@dataclass(frozen=True)
class JobSide:
    """One job of a diff, read: its label, step time and per-rank and per-link tables."""

    label: str
    rank_count: int
    job_step_us: float | None
    ranks: pa.Table
    links: pa.Table


@dataclass(frozen=True)
class JobDiff:
    """Base against new: step time, the ranks and links that changed most (new minus base)."""

    base: JobSide
    new: JobSide
    ranks: list[dict]  # rank, base/new stage_us, delta_us, delta_pct, base/new computing and wait
    links: list[dict]  # rank_a, rank_b, transport, base/new bandwidth, delta_pct
    notes: list[str]

    @property
    def step_delta_pct(self) -> float | None:
        b, n = self.base.job_step_us, self.new.job_step_us
        return None if not b or n is None else 100 * (n - b) / b


def the_job(path: Path) -> Job | None:
    """The one job under ``path``, or None when it holds no job or several."""
    if not path.is_dir():
        return None
    con = connect_offline()
    try:
        jobs = find_jobs(con, discover(path), path.resolve())
    finally:
        con.close()
    return jobs[0] if len(jobs) == 1 else None


def read_side(job: Job, label: str) -> JobSide:
    con = connect()
    try:
        load_job(con, job)
        with fixed_order(con):
            step = con.execute(
                "SELECT avg(s) FROM (SELECT max(stage_us) AS s FROM job_steps WHERE run_id = ? GROUP BY step_id)",
                [job.job_id],
            ).fetchall()[0][0]
        return JobSide(
            label, len(job.ranks), step, rank_metrics(con, job.job_id, label), link_metrics(con, job.job_id, label)
        )
    finally:
        con.close()


_RANK_DELTAS = """
SELECT coalesce(b.rank, n.rank) AS rank, b.stage_us AS base_stage_us, n.stage_us AS new_stage_us,
       n.stage_us - b.stage_us AS delta_us, 100 * (n.stage_us - b.stage_us) / nullif(b.stage_us, 0) AS delta_pct,
       b.computing_us AS base_computing_us, n.computing_us AS new_computing_us,
       b.wait_us AS base_wait_us, n.wait_us AS new_wait_us
FROM base_ranks b FULL JOIN new_ranks n USING (rank)
ORDER BY abs(coalesce(n.computing_us - b.computing_us, 0)) + abs(coalesce(n.wait_us - b.wait_us, 0)) DESC, rank
LIMIT $limit
"""
_LINK_DELTAS = """
SELECT coalesce(b.rank_a, n.rank_a) AS rank_a, coalesce(b.rank_b, n.rank_b) AS rank_b,
       coalesce(b.transport, n.transport) AS transport, b.bandwidth_gb_per_s AS base_gb_per_s,
       n.bandwidth_gb_per_s AS new_gb_per_s,
       100 * (n.bandwidth_gb_per_s - b.bandwidth_gb_per_s) / nullif(b.bandwidth_gb_per_s, 0) AS delta_pct
FROM base_links b FULL JOIN new_links n USING (rank_a, rank_b, transport)
WHERE delta_pct IS NULL OR abs(delta_pct) >= $min_pct
ORDER BY abs(coalesce(delta_pct, 100)) DESC, rank_a, rank_b, transport
LIMIT $limit
"""


def diff_jobs(base: JobSide, new: JobSide, limit: int = 10) -> JobDiff:
    """The ``limit`` ranks whose computing and wait changed most, and the links whose bandwidth changed
    most (by 1% or more, or found on one side only)."""
    con = connect_offline()
    try:
        for name, table in (("base_ranks", base.ranks), ("new_ranks", new.ranks)):
            con.register(name, table)
        for name, table in (("base_links", base.links), ("new_links", new.links)):
            con.register(name, table)
        ranks = con.sql(_RANK_DELTAS, params={"limit": limit}).to_arrow_table().to_pylist()
        links = con.sql(_LINK_DELTAS, params={"limit": limit, "min_pct": 1.0}).to_arrow_table().to_pylist()
    finally:
        con.close()
    notes = []
    if base.rank_count != new.rank_count:
        notes.append(f"the jobs have {base.rank_count} and {new.rank_count} ranks: ranks of one side only show NULL")
    return JobDiff(base, new, ranks, links, notes)
