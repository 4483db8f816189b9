"""Record a batch's jobs in the catalog: summary numbers, per-rank and per-link metrics, job findings."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from analyzer.diagnosis_model import job_summary
from analyzer.ingest.database import connect
from analyzer.ingest.metadata.fingerprint import source_fingerprint
from analyzer.job.diagnosis import diagnose_job
from analyzer.job.grouping import Job
from analyzer.job.metrics import link_metrics, rank_metrics
from analyzer.job.tables import load_job
from analyzer.rule_engine.model import ConfiguredRules
from analyzer.runs.work import WorkSettings, batch_rules, failure_table
from analyzer.stop_signal import stop_requested

JOB_TABLES = ("catalog_jobs", "job_rank_metrics", "job_link_metrics", "job_findings", "job_problems")


def job_fingerprint(job: Job, prints: Mapping[str, str] | None = None) -> str:
    """Fingerprint over the ranks' export fingerprints, in rank order (``prints``: those computed already, by
    export folder; the others are computed here)."""
    digest = hashlib.sha256()
    for r in job.ranks:
        fingerprint = (prints or {}).get(str(r.source.root)) or source_fingerprint(r.source)
        digest.update(f"{r.rank}:{fingerprint}\n".encode())
    return digest.hexdigest()[:16]


def job_tables(
    job: Job, label: str, fingerprint: str, configured: ConfiguredRules, diagnose: bool
) -> dict[str, pa.Table]:
    """The catalog rows of one job, read and (with ``diagnose``) judged in a connection of its own."""
    con = connect()
    try:
        problems, note = load_job(con, job)
        job_id = f"{job.job_id}@{fingerprint[:8]}"
        d = diagnose_job(con, job, note, problems, configured if diagnose else ConfiguredRules(()))
        s = job_summary(d.summary)
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
        if problems:
            tables["job_problems"] = pa.Table.from_pylist([{"job_id": job_id, **asdict(p)} for p in problems])
        return tables
    finally:
        con.close()


@dataclass(frozen=True)
class JobTask:
    """One job to analyse in a worker: picklable (the ranks' exports are read by path)."""

    job: Job
    label: str
    fingerprint: str


def analyze_job(task: JobTask, settings: WorkSettings) -> dict[str, pa.Table]:
    """A job's catalog rows, or a failures row; never raises on bad input. Runs in a worker (local
    pool or Dask), like analyze_run; the rules are read there from ``settings.rules_dir``, once per process."""
    try:
        configured = ConfiguredRules(batch_rules(settings.rules_dir), settings.params)
        return job_tables(task.job, task.label, task.fingerprint, configured, settings.diagnose)
    except Exception as exc:  # a worker never dies on bad input
        if stop_requested():
            raise
        return failure_table(task.label, task.fingerprint, f"job analysis failed: {type(exc).__name__}: {exc}")


def commit_job(catalog: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table]) -> None:
    """Write one job's rows in one transaction, replacing earlier rows of the same job."""
    job_id = tables["catalog_jobs"].column("job_id")[0].as_py()
    fingerprint = tables["catalog_jobs"].column("fingerprint")[0].as_py()
    catalog.execute("BEGIN TRANSACTION")
    try:
        for name in JOB_TABLES:
            catalog.execute(f"DELETE FROM {name} WHERE job_id = ?", [job_id])
        catalog.execute("DELETE FROM failures WHERE fingerprint = ?", [fingerprint])  # an earlier lost attempt
        for name, table in tables.items():
            catalog.register("_incoming", table)
            catalog.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _incoming")
            catalog.unregister("_incoming")
        catalog.execute("COMMIT")
    except BaseException:
        catalog.execute("ROLLBACK")
        raise


# One row per catalogued job, by path then id, with its first finding (position 1: the most job step
# time it would recover).
JOB_LIST_SQL = """
SELECT j.job_id, j.path, j.rank_count, j.summary_only_rank_count, j.world_size, j.step_count, j.job_step_us,
       j.step_spread_us, (SELECT count(*) FROM job_findings f WHERE f.job_id = j.job_id) AS finding_count,
       t.code AS top_code, t.severity AS top_severity, t.rule AS top_rule, t.subject AS top_subject,
       t.impact_us AS top_impact_us, t.message AS top_message,
       EXISTS (SELECT 1 FROM job_problems p WHERE p.job_id = j.job_id AND p.severity = 'error') AS partial
FROM catalog_jobs j LEFT JOIN job_findings t ON t.job_id = j.job_id AND t.position = 1
ORDER BY j.path, j.job_id
"""


def list_jobs(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """Every catalogued job with its step time and its top finding, by path; ``partial``: it lost input (an
    error among its job_problems)."""
    return con.sql(JOB_LIST_SQL).to_arrow_table()


def known_job_fingerprints(catalog: duckdb.DuckDBPyConnection) -> set[str]:
    return {r[0] for r in catalog.execute("SELECT fingerprint FROM catalog_jobs").fetchall()}


def job_label(job: Job, prefix: str, folder: Path) -> str:
    """The job's folder relative to the batch root (inside an archive as 'a.zip!/inner')."""
    common = Path(os.path.commonpath([r.source.root.parent for r in job.ranks]))
    rel = common.relative_to(folder).as_posix() if common.is_relative_to(folder) else common.name
    rel = "" if rel == "." else rel
    return f"{prefix}{rel}" if prefix else (rel or ".")
