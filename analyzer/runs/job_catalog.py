"""Record a batch's jobs in the catalog: summary numbers, per-rank and per-link metrics, job findings."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import duckdb
import pyarrow as pa

from analyzer.ingest.database import connect
from analyzer.ingest.metadata.fingerprint import source_fingerprint
from analyzer.job.diagnosis import diagnose_job
from analyzer.job.grouping import Job
from analyzer.job.metrics import link_metrics, rank_metrics
from analyzer.job.tables import load_job

JOB_TABLES = ("catalog_jobs", "job_rank_metrics", "job_link_metrics", "job_findings")


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
            "job_rank_metrics": rank_metrics(con, job.job_id, job_id),
            "job_link_metrics": link_metrics(con, job.job_id, job_id),
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
