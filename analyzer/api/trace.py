"""The Trace: exports (runs and jobs) read into DuckDB, with its tables as Arrow or polars."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from analyzer.api import frames
from analyzer.execution.memory import capped_default, memory_limit_bytes
from analyzer.execution.threads import small_input_threads
from analyzer.ingest.database import connect, load_duckdb, save_duckdb, save_parquet
from analyzer.ingest.loader import usable_run_ids
from analyzer.ingest.metadata.discover import Scanned
from analyzer.ingest.model import ExportSource, Problem
from analyzer.ingest.schema import TABLES
from analyzer.job.job_ingest import JOB_MEMORY_BYTES, LoadedJob, load_with_jobs
from analyzer.job.spread_read import spread_reader

if TYPE_CHECKING:  # pyarrow and polars load when a table is asked for, the logs' modules when logs are given
    # (api/logs.py), not with every command
    import polars as pl
    import pyarrow as pa

    from analyzer.logs.profile_join import AttachedLogs
    from analyzer.runs.executor import Executor


@dataclass
class Trace:
    """One or more exports read into DuckDB: the normalized tables (``docs/schema.md``), the runs
    found, the multi-rank jobs found (``jobs``) and the problems met. ``query`` returns Arrow tables,
    ``table``, ``breakdown``, ``steps`` and ``op_types`` polars frames; ``con`` is the DuckDB connection.
    A diagnosis with the built-in rules leaves it as it was (files still readable, ``save`` works); one
    with rules of a folder of your own closes it to files (their SQL is sandboxed, as `npu-triage query`)."""

    con: duckdb.DuckDBPyConnection
    run_ids: list[str]
    problems: list[Problem] = field(default_factory=list)
    sources: list[ExportSource] = field(default_factory=list)
    jobs: list[LoadedJob] = field(default_factory=list)
    logs: list[AttachedLogs] = field(default_factory=list)  # CANN log folders read into it (api/logs.py)

    def query(self, sql: str, params: object = None) -> pa.Table:
        """The rows of a SQL query over the normalized tables (and the helper views, once diagnosed)."""
        return self.con.sql(sql, params=params).to_arrow_table()

    def table(self, name: str) -> pl.DataFrame:
        """A normalized table (``ops``, ``timeline``, ``steps``, ...) as a polars DataFrame."""
        if name not in TABLES:
            raise KeyError(f"no normalized table {name!r}; known: {', '.join(TABLES)}")
        return self.con.sql(f"SELECT * FROM {name}").pl()

    def usable_run_ids(self) -> list[str]:
        """The runs with at least one timed device task (what a diagnosis needs)."""
        return usable_run_ids(self.con, self.run_ids)

    def breakdown(self, run_id: str | None = None) -> pl.DataFrame:
        """Where the run's time went (all its steps together): a row per part (computing, each gap cause,
        free time) with its microseconds and its share in percent, the numbers every report prints."""
        return frames.breakdown(self.con, self._run(run_id))

    def steps(self, run_id: str | None = None) -> pl.DataFrame:
        """The time breakdown per step (or per profiled span): a row per window, a column per part."""
        return frames.steps(self.con, self._run(run_id))

    def op_types(self, run_id: str | None = None) -> pl.DataFrame:
        """Device time per operator type: busy microseconds (overlaps counted once) and tasks."""
        return frames.op_types(self.con, self._run(run_id))

    def op_families(self, run_id: str | None = None) -> pl.DataFrame:
        """Device time per operator family (type + input shapes, what the rules name): tasks, total, mean and
        longest microseconds, most time first."""
        return frames.op_families(self.con, self._run(run_id))

    def save(self, db_path: Path | str) -> None:
        """Write the runs' and jobs' tables into a DuckDB file (``npu-triage ingest --db``), replacing their
        earlier rows; OutputError names the file when it cannot be written."""
        save_duckdb(self.con, Path(db_path), [*self.run_ids, *(j.job.job_id for j in self.jobs)])

    def save_parquet(self, out_dir: Path | str) -> list[Path]:
        """Write one Parquet file per normalized table into ``out_dir``; returns the files written."""
        return save_parquet(self.con, Path(out_dir))

    def _run(self, run_id: str | None) -> str:
        usable = self.usable_run_ids()
        if run_id is None:
            if len(usable) != 1:
                raise ValueError(f"name one run_id of the {len(usable)} usable runs: {', '.join(usable) or 'none'}")
            return usable[0]
        if run_id not in usable:  # an empty diagnosis of a run that is not there would read as a clean run
            raise ValueError(f"no usable run {run_id!r} in the trace; its usable runs: {', '.join(usable) or 'none'}")
        return run_id

    def __repr__(self) -> str:
        jobs = f", {len(self.jobs)} job(s)" if self.jobs else ""
        return f"Trace({len(self.run_ids)} run(s){jobs}, {len(self.problems)} problem(s): {', '.join(self.run_ids)})"

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load(
    path: Path | str,
    *,
    memory_limit: str | None = None,
    left_out_kinds: frozenset[str] = frozenset(),
    scanned: Scanned | None = None,
    progress: Callable[[ExportSource], None] | None = None,
    logs: bool | Path | str = True,
    executor: Executor | None = None,
) -> Trace:
    """Read every export under ``path`` (an export folder or a folder above several), every multi-rank
    job found there (``Trace.jobs``; ranks holding summaries only are read as the job's only) and the CANN
    logs (``Trace.logs``: their host activities become gap causes), as ``npu-triage diagnose`` reads them.

    Args:
        path: the export folder.
        memory_limit: DuckDB's memory limit such as '2GB' (default: ``execution/memory.py``).
        left_out_kinds: timeline event kinds not to store (a caller that never reads them).
        scanned: the path's ``discover.scan``, when the caller walked the tree already.
        progress: called with each export as its reading starts.
        logs: True: the log collections found inside or beside the exports; a folder: its collections,
            on every run; False: none (``attach_logs`` reads them later, with a UTC offset).
        executor: an entered executor (``runs.executor.LocalPool``, ``runs.dask_executor.DaskExecutor``)
            whose workers read the exports in chunks (``job/spread_read.py``); default: this process.

    Raises IngestError when nothing readable is there; problems with single files are listed in
    ``Trace.problems`` (and a job's in its ``problems``) instead."""
    con = connect(memory_limit_bytes(memory_limit), small_input_threads(Path(path)))
    job_limit = capped_default(JOB_MEMORY_BYTES, memory_limit)
    reader = {"read_runs": spread_reader(executor)} if executor is not None else {}
    ingested, jobs = load_with_jobs(
        Path(path), left_out_kinds, scanned, progress, con=con, job_limit=job_limit, **reader
    )
    trace = Trace(ingested.con, ingested.run_ids, ingested.problems, ingested.sources, jobs)
    if logs is not False:
        from analyzer.api.logs import attach_logs  # it builds on the Trace defined here

        attach_logs(trace, None if logs is True else Path(logs))
    return trace


def open_database(db_path: Path | str, *, memory_limit: str | None = None) -> Trace:
    """A Trace over the tables of a DuckDB file written by ``npu-triage ingest --db`` (only read)."""
    con = load_duckdb(Path(db_path), memory_limit_bytes(memory_limit))
    run_ids = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
    return Trace(con, run_ids)
