"""Read a path that may hold jobs: per-rank exports through the usual loader, jobs through their tables."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from analyzer.duckdb_connect import set_memory_limit
from analyzer.ingest.database import connect
from analyzer.ingest.loader import Ingested, load_export
from analyzer.ingest.metadata.discover import Scanned, absent_reason, printable, scan
from analyzer.ingest.model import ExportSource, IngestError, Problem
from analyzer.job.grouping import Job, find_jobs

# A job's ranks fill tables that grow with the number of ranks and are scanned in order (helper tables, rank
# pages): past this, DuckDB keeps them in its temporary folder, so that the process does not grow with the
# job. A limit the user gives (--memory-limit, the environment) wins.
JOB_MEMORY_BYTES = 1 << 30


@dataclass
class LoadedJob:
    """A job whose tables are filled, with what went wrong reading it and where its groups came from."""

    job: Job
    problems: list[Problem] = field(default_factory=list)
    group_note: str = ""


def load_with_jobs(
    path: Path,
    left_out_kinds: frozenset[str],
    scanned: Scanned | None = None,
    progress: Callable[[ExportSource], None] | None = None,
    *,
    con: duckdb.DuckDBPyConnection | None = None,
    job_limit: int | None = None,
    read_runs: Callable[..., Ingested] = load_export,
) -> tuple[Ingested, list[LoadedJob]]:
    """Every export under ``path`` read as a run, except the job ranks holding summaries only (no
    per-task data: nothing a per-rank diagnosis could judge), which only the job tables read; and
    every job found, its tables filled. ``scanned``: the path's ``discover.scan`` when the caller has it
    already; ``progress``: called as each export starts being read (load_export); ``con``: the connection
    to fill (default: a new one of ``connect()``); ``job_limit``: DuckDB's memory limit from the moment a job is
    found (``JOB_MEMORY_BYTES``), when given; ``read_runs``: what reads the exports read as runs, with
    ``load_export``'s keywords (``spread_read.spread_reader``: spread over an executor).
    Raises IngestError like load_export."""
    if not path.exists():
        raise IngestError(absent_reason(path), printable(path))
    sources, unreadable = scanned or scan(path)
    if not sources:
        return load_export(path, con=con, left_out_kinds=left_out_kinds), []  # raises its own message
    con = con or connect()
    jobs = find_jobs(con, sources, path.resolve() if path.is_dir() else path.resolve().parent)
    if jobs and job_limit is not None:
        set_memory_limit(con, job_limit)
    summary_only = {r.source.source_id for j in jobs for r in j.ranks if not r.has_kernels}
    per_run = [s for s in sources if s.source_id not in summary_only]
    if not jobs:
        ingested = read_runs(
            path, con=con, left_out_kinds=left_out_kinds, sources=per_run, unreadable=unreadable, progress=progress
        )
        return ingested, []
    # the job tables' readers (and pyarrow, which they use) load only when a job is found
    from analyzer.job.tables_apart import jobs_apart

    with jobs_apart(con, jobs, job_limit) as notes:  # the job tables are filled while the exports are read
        ingested = read_runs(
            path, con=con, left_out_kinds=left_out_kinds, sources=per_run, unreadable=unreadable, progress=progress
        )
    return ingested, [LoadedJob(job, problems, note) for job, (problems, note) in zip(jobs, notes, strict=True)]
