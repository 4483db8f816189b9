"""Read a path that may hold jobs: per-rank exports through the usual loader, jobs through their tables."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from analyzer.ingest.database import connect
from analyzer.ingest.discover import discover
from analyzer.ingest.loader import Ingested, load_export
from analyzer.ingest.memory_budget import current_limit_bytes, duckdb_memory_limit
from analyzer.ingest.model import IngestError, Problem
from analyzer.job.grouping import Job, find_jobs
from analyzer.job.tables import load_job

# DuckDB's floor while it reads a job's metadata and summary files: its JSON reader takes buffers of
# 16 to 32 MiB per thread whatever the files' size, more than a budget sized from one small file.
JOB_MEMORY_FLOOR = 256 << 20


@contextmanager
def job_memory(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Run the block with DuckDB's memory limit at least JOB_MEMORY_FLOOR, then put it back."""
    limit = current_limit_bytes(con)
    if limit is None or limit >= JOB_MEMORY_FLOOR:
        yield
        return
    con.execute(f"SET memory_limit = '{JOB_MEMORY_FLOOR}B'")
    try:
        yield
    finally:
        con.execute(f"SET memory_limit = '{limit}B'")


@dataclass
class LoadedJob:
    """A job whose tables are filled, with what went wrong reading it and where its groups came from."""

    job: Job
    problems: list[Problem] = field(default_factory=list)
    group_note: str = ""


def load_with_jobs(path: Path, left_out_kinds: frozenset[str]) -> tuple[Ingested, list[LoadedJob]]:
    """Every export under ``path`` read as a run, except the job ranks holding summaries only (no
    per-task data: nothing a per-rank diagnosis could judge), which only the job tables read; and
    every job found, its tables filled. Raises IngestError like load_export."""
    if not path.exists():
        raise IngestError(f"{path}: no such file or folder")
    sources = discover(path)
    if not sources:
        return load_export(path, left_out_kinds=left_out_kinds), []  # raises its own message
    files = [p for s in sources for paths in s.files.values() for p in paths]
    con = connect(duckdb_memory_limit(files))
    with job_memory(con):
        jobs = find_jobs(con, sources, path.resolve() if path.is_dir() else path.resolve().parent)
    summary_only = {r.source.source_id for j in jobs for r in j.ranks if not r.has_kernels}
    per_run = [s for s in sources if s.source_id not in summary_only]
    ingested = load_export(path, con=con, left_out_kinds=left_out_kinds, sources=per_run)
    loaded = []
    with job_memory(con):
        for job in jobs:
            problems, note = load_job(con, job)
            loaded.append(LoadedJob(job, problems, note))
    return ingested, loaded
