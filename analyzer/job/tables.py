"""Fill the job tables of jobs: their ranks, the summaries of all ranks, groups and links."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from analyzer.duckdb_connect import fixed_order
from analyzer.ingest.model import Problem
from analyzer.job.analysis_db_scan import DB_TABLES, pack_tables
from analyzer.job.grouping import Job, JobRank
from analyzer.job.groups import load_job_groups, set_pp_stages
from analyzer.job.matrix_links import load_job_links
from analyzer.job.rank_checks import account_ranks
from analyzer.job.summary_scan import JobSummaryFiles, load_job_matrix, load_job_summaries

SUMMARY_KINDS = ("step_trace_time", "communication", "communication_matrix")
# The tables a job is read into (ingest/schema.toml), in schema order.
JOB_TABLES = ("job_ranks", "job_groups", "job_steps", "job_comm_ops", "job_comm_bandwidth", "job_links")


def _db_tables(job: Job) -> list[tuple[int, tuple[Path, ...], tuple[str, ...]]]:
    """Per rank holding an analysis.db, the database's tables that stand for the summary files it lacks."""
    wanted = []
    for r in job.ranks:
        tables = tuple(t for kind, names in DB_TABLES.items() if not r.source.has(kind) for t in names)
        if tables and (paths := r.source.files.get("analysis_db", ())):
            wanted.append((r.rank, tuple(paths), tables))
    return wanted


def _rank_table(job: Job, docs: pa.Table) -> pa.Table:
    """One row per rank: its export and what it holds (a small table, one row per rank); a summary counts
    as held from its file or its analysis.db table (``docs``)."""
    ranks = job.ranks
    held = set(zip(docs.column("rank").to_pylist(), docs.column("tbl").to_pylist(), strict=True))

    def holds(r: JobRank, kind: str) -> bool:
        return r.source.has(kind) or (r.rank, DB_TABLES[kind][0]) in held

    return pa.table(
        {
            "rank": pa.array([r.rank for r in ranks], pa.int32()),
            "rank_run_id": [r.source.source_id for r in ranks],
            "source_path": [r.source.rel_path for r in ranks],
            "rank_source": [r.rank_source for r in ranks],
            "world_size": pa.array([r.meta.world_size for r in ranks], pa.int32()),
            "has_kernels": [r.has_kernels for r in ranks],
            "has_step_trace": [holds(r, "step_trace_time") for r in ranks],
            "has_communication": [holds(r, "communication") for r in ranks],
            "has_matrix": [holds(r, "communication_matrix") for r in ranks],
            "files": [",".join(sorted(r.source.files)) for r in ranks],
            "collection_end_ns": pa.array([r.meta.collection_end_ns for r in ranks], pa.int64()),
        }
    )


def _comm_files(job: Job, docs: pa.Table) -> str:
    """The files the ranks' communication groups were read from, as the note on inferred groups names them."""
    texts = any(r.source.has("communication") for r in job.ranks)
    dbs = "CommAnalyzerTime" in docs.column("tbl").to_pylist()
    return " or ".join([*(["communication.json"] if texts or not dbs else []), *(["analysis.db"] if dbs else [])])


def load_job(con: duckdb.DuckDBPyConnection, job: Job) -> tuple[list[Problem], str]:
    """Fill every job table for ``job``. Returns the problems met (files that could not be read) and a
    note on where the parallel groups came from."""
    return load_jobs(con, [job])[0]


def load_jobs(con: duckdb.DuckDBPyConnection, jobs: list[Job]) -> list[tuple[list[Problem], str]]:
    """``load_job`` of each of ``jobs``, in their order: the same rows, in the same order, and the same problems
    and notes as each read alone. Each kind of summary file of all of them is read in one scan (summary_scan.py),
    so that a statement is planned once for the jobs, not once per job. Jobs sharing a file (one a problem of it
    could not be told to) are read one by one."""
    packed = [pack_tables(_db_tables(job)) for job in jobs]
    files = [
        JobSummaryFiles(
            job.job_id,
            {kind: [(p, r.rank) for r in job.ranks for p in r.source.files.get(kind, ())] for kind in SUMMARY_KINDS},
            docs,
        )
        for job, (docs, _) in zip(jobs, packed, strict=True)
    ]
    owned = [set(f.paths) for f in files]
    apart = len(set().union(*owned)) < sum(len(paths) for paths in owned)  # a file of two jobs
    with fixed_order(con):
        for job, (docs, _) in zip(jobs, packed, strict=True):
            con.register("_job_rank_rows", _rank_table(job, docs))
            con.execute(
                "INSERT INTO job_ranks BY NAME SELECT $job AS run_id, * FROM _job_rank_rows", {"job": job.job_id}
            )
            con.unregister("_job_rank_rows")
        summaries = [load_job_summaries(con, [f])[0] for f in files] if apart else load_job_summaries(con, files)
        loaded = []
        for job, (docs, unreadable), found, f in zip(jobs, packed, summaries, files, strict=True):
            problems = list(job.problems) + unreadable + found + load_job_matrix(con, f)
            note = load_job_groups(con, job, _comm_files(job, docs))
            problems += load_job_links(con, job.job_id)
            set_pp_stages(con, job.job_id)
            problems += account_ranks(con, job)
            loaded.append((problems, note))
        return loaded
