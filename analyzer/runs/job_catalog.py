"""Record a batch's jobs in the catalog: summary numbers, per-rank and per-link metrics, job findings."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from analyzer.diagnosis_model import job_summary
from analyzer.duckdb_connect import fixed_order
from analyzer.ingest.database import all_or_nothing, connect, insert_tables
from analyzer.ingest.metadata.fingerprint import source_fingerprint
from analyzer.ingest.sql_values import in_list
from analyzer.job.diagnosis import Judged, diagnose_job, judge_jobs
from analyzer.job.grouping import Job
from analyzer.job.metrics import link_metrics, rank_metrics
from analyzer.job.tables import load_job, load_jobs
from analyzer.rule_engine.model import ConfiguredRules, Explanation, Finding
from analyzer.rule_engine.runner import build_views
from analyzer.runs.work import WorkSettings, batch_rules, failure_table, mark_converting
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
        return _judged_job(con, job, load_job(con, job), label, fingerprint, configured if diagnose else None)
    finally:
        con.close()


def _judged_job(
    con: duckdb.DuckDBPyConnection,
    job: Job,
    loaded: tuple[list, str],
    label: str,
    fingerprint: str,
    configured: ConfiguredRules | None,
    judged: Judged | None = None,
) -> dict[str, pa.Table]:
    """The catalog rows of a job whose tables ``con`` holds (``loaded``: load_job's problems and group note),
    judged by ``configured`` (None: no diagnosis; ``judged``: its job rules' results from ``judge_jobs``)."""
    problems, note = loaded
    job_id = f"{job.job_id}@{fingerprint[:8]}"
    d = diagnose_job(con, job, note, problems, ConfiguredRules(()) if configured is None else configured, judged)
    s = job_summary(d.summary)
    jobs = {
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
    tables = {
        "catalog_jobs": pa.Table.from_pylist([jobs]),
        "job_rank_metrics": rank_metrics(con, job.job_id, job_id),
        "job_link_metrics": link_metrics(con, job.job_id, job_id),
    }
    if d.findings:
        tables["job_findings"] = pa.Table.from_pylist([_finding_row(job_id, i, f) for i, f in enumerate(d.findings, 1)])
    if problems:
        tables["job_problems"] = pa.Table.from_pylist([{"job_id": job_id, **asdict(p)} for p in problems])
    if d.explains:
        tables[JOB_EXPLAINS] = _explains_table(job, d.explains)
    return tables


# The table a job's tables bring besides its catalog rows (never committed): per job finding with an
# [explains] (in the job's finding order) and per rank export it explains, what the batch needs to explain
# that rank's findings as ``diagnose`` does (runs/job_ranks.py). explained_us NULL: whole findings.
JOB_EXPLAINS = "job_explains"
_TEXT = ("export_path", "code", "rule", "subject", "note")
_EXPLAINS_SCHEMA = pa.schema(
    [
        ("position", pa.int32()),
        *((name, pa.string()) for name in _TEXT),
        ("categories", pa.list_(pa.string())),
        ("explained_us", pa.float64()),
        ("job_steps", pa.int64()),
    ]
)


def _explains_table(job: Job, explains: tuple[Explanation, ...]) -> pa.Table:
    """The job's explanations by the export folder of each rank they explain (their run ids: the ranks'
    source ids in the job's connection)."""
    roots = {r.source.source_id: str(r.source.root) for r in job.ranks}
    rows = [
        {
            "position": i,
            "export_path": roots[run],
            "code": e.by.code,
            "rule": e.by.rule,
            "subject": e.by.subject,
            "note": e.by.note,
            "categories": list(e.categories),
            "explained_us": None if e.explained_us is None else e.explained_us[run],
            "job_steps": e.job_steps,
        }
        for i, e in enumerate(explains)
        for run in e.run_ids
        if run in roots
    ]
    return pa.Table.from_pylist(rows, schema=_EXPLAINS_SCHEMA)


def _finding_row(job_id: str, position: int, f: Finding) -> dict[str, object]:
    """The job_findings row of the job's finding ``f`` at ``position`` (from 1)."""
    return {
        "job_id": job_id,
        "position": position,
        "code": f.code,
        "rule": f.rule,
        "severity": f.severity,
        "subject": f.subject,
        "impact_us": f.impact_us,
        "span_share": f.span_share,
        "message": f.message,
    }


@dataclass(frozen=True)
class JobTask:
    """One job to analyse in a worker: picklable (the ranks' exports are read by path)."""

    job: Job
    label: str
    fingerprint: str


def analyze_job(task: JobTask, settings: WorkSettings) -> dict[str, pa.Table]:
    """A job's catalog rows, or a failures row; never raises on bad input. Runs in a worker (local
    pool or Dask), like analyze_run; the rules are read there from ``settings.rules_dir``, once per process."""
    mark_converting()  # a worker's first task may be a job's
    try:
        configured = ConfiguredRules(batch_rules(settings.rules_dir), settings.params)
        return job_tables(task.job, task.label, task.fingerprint, configured, settings.diagnose)
    except Exception as exc:  # a worker never dies on bad input
        if stop_requested():
            raise
        return failure_table(task.label, task.fingerprint, f"job analysis failed: {type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class JobChunk:
    """Jobs that one worker reads into one connection and judges there, one after the other (as ``diagnose``
    judges the jobs of a tree): the connection, its helper views and the rules' reading are paid once."""

    tasks: tuple[JobTask, ...]


def analyze_jobs(chunk: JobChunk, settings: WorkSettings) -> list[dict[str, pa.Table]]:
    """Each job's catalog rows (or failures row), in ``chunk.tasks`` order; any failure in the shared
    connection sends every job of the chunk alone (``analyze_job``): one job never spoils the others."""
    if len(chunk.tasks) == 1:
        return [analyze_job(chunk.tasks[0], settings)]
    try:
        configured = ConfiguredRules(batch_rules(settings.rules_dir), settings.params)
        judge = configured if settings.diagnose else None
        con = connect()
        try:
            # load_jobs runs on one thread itself (job/fixed_order.py), once for the chunk's jobs
            loaded = list(zip(chunk.tasks, load_jobs(con, [t.job for t in chunk.tasks]), strict=True))
            # on the connection's threads, as diagnose_job builds them; judge_jobs builds them for the rules it runs
            judged = judge_jobs(con, judge, [t.job.job_id for t in chunk.tasks]) if judge else {}
            if not judged:
                build_views(con, judge or ConfiguredRules(()))
            with fixed_order(con):  # every job query on one thread: set once for the chunk, not per query
                return [
                    _judged_job(con, t.job, found, t.label, t.fingerprint, judge, judged.get(t.job.job_id))
                    for t, found in loaded
                ]
        finally:
            con.close()
    except Exception:
        if stop_requested():
            raise
        return [analyze_job(t, settings) for t in chunk.tasks]


def commit_jobs(
    catalog: duckdb.DuckDBPyConnection,
    jobs: list[dict[str, pa.Table]],
    rank_findings: Sequence[pa.Table] = (),
    kept: Collection[str] = (),
) -> None:
    """Write the analysed jobs' rows (of distinct jobs) in ONE transaction, each replacing earlier rows of the
    same job: every job is whole or absent, and the catalog pays one commit for all. The same job is one of the
    same id, or of the same folder (path) and name but another fingerprint, not one of ``kept`` (the jobs the
    batch's tree holds): a job whose ranks grew or changed replaces what the catalog said of it before.
    ``rank_findings``: the findings rows of runs catalogued already (the jobs' ranks, their
    findings explained by the jobs'), which replace those runs' rows in the same transaction: a job is never in
    the catalog without its explanations."""
    if not jobs:
        return
    rows = [t["catalog_jobs"].select(["job_id", "path", "fingerprint"]).to_pylist()[0] for t in jobs]
    prints = [row["fingerprint"] for row in rows]
    with all_or_nothing(catalog):
        ids = [row["job_id"] for row in rows] + _earlier_states(catalog, rows, kept)
        for name in JOB_TABLES:
            catalog.execute(f"DELETE FROM {name} WHERE {in_list('job_id')}", [ids])
        # an earlier lost attempt
        catalog.execute(f"DELETE FROM failures WHERE {in_list('fingerprint')}", [prints])
        for name, table in _inserts(jobs):
            insert_tables(catalog, {name: table})
        if rank_findings:
            found = pa.concat_tables(rank_findings)
            catalog.execute(
                f"DELETE FROM findings WHERE {in_list('run_id')}", [found.column("run_id").unique().to_pylist()]
            )
            insert_tables(catalog, {"findings": found})


def _earlier_states(catalog: duckdb.DuckDBPyConnection, jobs: list[dict[str, str]], kept: Collection[str]) -> list[str]:
    """The ids of the catalog's jobs at the folder and of the name of one of ``jobs`` (catalog_jobs rows), but
    of no fingerprint of ``kept``: the job as an earlier batch found it, e.g. with some of its ranks."""
    # a job's name is its catalog id '<name>@<fingerprint digits>' up to the '@' (a name holds none: grouping._job_id)
    found = catalog.execute(
        "SELECT job_id FROM catalog_jobs WHERE [path, split_part(job_id, '@', 1)] IN "
        "(SELECT [k[1], split_part(k[2], '@', 1)] FROM (SELECT unnest(?::VARCHAR[][]) AS k)) "
        "AND NOT list_contains(?::VARCHAR[], fingerprint)",
        [[[row["path"], row["job_id"]] for row in jobs], list(kept)],
    ).fetchall()
    return [job_id for (job_id,) in found]


def _inserts(jobs: list[dict[str, pa.Table]]) -> list[tuple[str, pa.Table]]:
    """The jobs' tables to insert, in job order per catalog table: the jobs' tables of one name as one table when
    their schemas agree (one INSERT), else each on its own (a job's tables as it made them: two jobs' columns
    may differ in type, all NULL)."""
    names = dict.fromkeys(name for tables in jobs for name in tables if name != JOB_EXPLAINS)
    found: list[tuple[str, pa.Table]] = []
    for name in names:
        parts = [tables[name] for tables in jobs if name in tables]
        if all(part.schema.equals(parts[0].schema) for part in parts):
            found.append((name, pa.concat_tables(parts)))
        else:
            found += [(name, part) for part in parts]
    return found


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
