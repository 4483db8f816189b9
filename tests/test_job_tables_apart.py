"""A job's tables are filled in a database of their own on a thread while its ranks' exports are read
(job/tables_apart.py): the same rows, in the same order, as load_job fills on the connection."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from analyzer.ingest.database import connect
from analyzer.ingest.loader import load_export
from analyzer.ingest.metadata.discover import scan
from analyzer.ingest.model import IngestError
from analyzer.job import tables_apart
from analyzer.job.grouping import find_jobs
from analyzer.job.job_ingest import load_with_jobs
from analyzer.job.tables import load_job
from tests.spread_jobs import write_damaged_job


def _job_tables(con) -> dict[str, list[tuple]]:
    return {name: con.execute(f"SELECT * FROM {name}").fetchall() for name in tables_apart.JOB_TABLES}


@pytest.mark.slow
def test_the_job_tables_are_filled_beside_the_reading_as_on_the_connection(tmp_path: Path, monkeypatch):
    root = write_damaged_job(tmp_path / "job", ranks=6)
    fillers: list[tuple[str, object]] = []
    usual = tables_apart.load_jobs

    def recorded(con, jobs):
        fillers.append((threading.current_thread().name, con))
        return usual(con, jobs)

    monkeypatch.setattr(tables_apart, "load_jobs", recorded)
    con = connect()
    _, loaded = load_with_jobs(root, frozenset(), con=con)
    [(thread, filled)] = fillers
    assert thread != threading.main_thread().name and filled is not con
    alone = connect()
    [job] = find_jobs(alone, scan(root)[0], root)
    problems, note = load_job(alone, job)
    assert _job_tables(con) == _job_tables(alone)  # every row, in its order
    assert [p.line() for p in loaded[0].problems] == [p.line() for p in problems] and loaded[0].group_note == note


@pytest.mark.slow
def test_a_reading_that_fails_is_said_and_the_job_tables_stop(tmp_path: Path):
    root = write_damaged_job(tmp_path / "job", ranks=6)

    def failing(*args, **kwargs):
        raise IngestError("unreadable", str(root))

    with pytest.raises(IngestError):
        load_with_jobs(root, frozenset(), read_runs=failing)
    assert load_export(root).con is not None  # the process goes on: nothing held by the stopped thread
