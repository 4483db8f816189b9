"""The job tables filled beside the reading of the ranks' exports: in a database of their own, on a thread.

A job's tables read only the ranks' small files (never the runs' tables) and run on one DuckDB thread
(fixed_order), so on the connection they would wait for the exports' reading and then leave a core idle. In
a database of their own, whose one thread is its whole thread count, they are filled while the connection
reads the exports, and copied into it afterwards: the same rows, in the same order, as ``load_job`` of each alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import duckdb
import pyarrow as pa

from analyzer.ingest.database import connect, insert_tables
from analyzer.ingest.model import Problem
from analyzer.job.grouping import Job
from analyzer.job.tables import JOB_TABLES, load_jobs

# The share of the job's memory limit the job tables' database may take before it spills: it works beside
# the connection, whose limit is the job's.
_SHARE = 4

Filled = tuple[list[tuple[list[Problem], str]], dict[str, pa.Table]]


@contextmanager
def jobs_apart(con: duckdb.DuckDBPyConnection, jobs: list[Job], limit_bytes: int | None) -> Iterator[list]:
    """Within the block, the tables of ``jobs`` are filled on a thread; on leaving it, they are copied into
    ``con`` and the list yielded holds each job's (problems, group note) of ``load_job``, in ``jobs`` order.
    ``limit_bytes``: the job's memory limit (a share of it for the thread's database), or None."""
    side = connect(limit_bytes // _SHARE if limit_bytes else None)
    loaded: list = []
    try:
        side.execute("SET threads = 1")
        with ThreadPoolExecutor(max_workers=1) as pool:
            filling = pool.submit(_fill, side, jobs)
            try:
                yield loaded
            except BaseException:
                side.interrupt()  # the reading failed or was stopped: the job tables are not wanted
                raise
            notes, tables = filling.result()
    finally:
        side.close()
    insert_tables(con, {name: rows for name, rows in tables.items() if rows.num_rows})  # in their order
    loaded.extend(notes)


def _fill(side: duckdb.DuckDBPyConnection, jobs: list[Job]) -> Filled:
    """Every job's tables filled in ``side``: each job's (problems, note) and the tables' rows."""
    notes = load_jobs(side, jobs)
    return notes, {name: side.sql(f"SELECT * FROM {name}").to_arrow_table() for name in JOB_TABLES}
