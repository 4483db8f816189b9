"""Record a batch's jobs in the catalog: summary numbers, per-rank and per-link metrics, job findings."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import duckdb
import pyarrow as pa

from analyzer.ingest.database import connect
from analyzer.ingest.fingerprint import source_fingerprint
from analyzer.job.diagnosis import diagnose_job
from analyzer.job.grouping import Job
from analyzer.job.tables import load_job

JOB_TABLES = ("catalog_jobs", "job_rank_metrics", "job_link_metrics", "job_findings")

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


def job_fingerprint(job: Job) -> str:
    """Fingerprint over the ranks' export fingerprints, in rank order."""
    digest = hashlib.sha256()
    for r in job.ranks:
        digest.update(f"{r.rank}:{source_fingerprint(r.source)}\n".encode())
    return digest.hexdigest()[:16]


def job_tables(
    job: Job, label: str, fingerprint: str, rules: list, params: dict, diagnose: bool
) -> dict[str, pa.Table]:
    """The catalog rows of one job, read and (with ``diagnose``) judged in a connection of its own."""
    con = connect()
    try:
        _, note = load_job(con, job)
        job_id = f"{job.job_id}@{fingerprint[:8]}"
        d = diagnose_job(con, job, note, [], rules if diagnose else [], params)
        s = d.summary
        keys = {"job": job.job_id, "id": job_id}
        jobs = pa.Table.from_pylist(
            [
                {
                    "job_id": job_id,
                    "path": label,
                    "fingerprint": fingerprint,
                    "rank_count": s["rank_count"],
                    "world_size": job.world_size,
                    "summary_only_rank_count": s["summary_only_rank_count"],
                    "step_count": s["step_count"],
                    "job_step_us": s["job_step_us"],
                    "step_spread_us": s["step_spread_us"],
                    "groups": note,
                }
            ]
        )
        findings = [
            {
                "job_id": job_id,
                "position": i,
                "code": f.code,
                "rule": f.rule,
                "severity": f.severity,
                "subject": f.subject,
                "impact_us": f.impact_us,
                "span_share": f.span_share,
                "message": f.message,
            }
            for i, f in enumerate(d.findings, 1)
        ]
        tables = {
            "catalog_jobs": jobs,
            "job_rank_metrics": con.sql(_RANKS, params=keys).to_arrow_table(),
            "job_link_metrics": con.sql(_LINKS, params=keys).to_arrow_table(),
        }
        if findings:
            tables["job_findings"] = pa.Table.from_pylist(findings)
        return tables
    finally:
        con.close()


def commit_job(catalog: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table]) -> None:
    """Write one job's rows in one transaction, replacing earlier rows of the same job."""
    job_id = tables["catalog_jobs"].column("job_id")[0].as_py()
    catalog.execute("BEGIN TRANSACTION")
    try:
        for name in JOB_TABLES:
            catalog.execute(f"DELETE FROM {name} WHERE job_id = ?", [job_id])
        for name, table in tables.items():
            catalog.register("_incoming", table)
            catalog.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _incoming")
            catalog.unregister("_incoming")
        catalog.execute("COMMIT")
    except BaseException:
        catalog.execute("ROLLBACK")
        raise


def known_job_fingerprints(catalog: duckdb.DuckDBPyConnection) -> set[str]:
    return {r[0] for r in catalog.execute("SELECT fingerprint FROM catalog_jobs").fetchall()}


def job_label(job: Job, prefix: str, folder: Path) -> str:
    """The job's folder relative to the batch root (inside an archive as 'a.zip!/inner')."""
    common = Path(os.path.commonpath([r.source.root.parent for r in job.ranks]))
    rel = common.relative_to(folder).as_posix() if common.is_relative_to(folder) else common.name
    rel = "" if rel == "." else rel
    return f"{prefix}{rel}" if prefix else (rel or ".")
