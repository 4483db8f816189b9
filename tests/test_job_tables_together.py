"""Jobs' tables filled together (job/tables.py ``load_jobs``: each kind of summary file of every job read in one
scan): each job gets the rows, in their order, the problems and the group note that ``load_job`` gives it alone,
whatever its form (text files, analysis.db) and whatever is wrong with its files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from analyzer.ingest.database import connect
from analyzer.ingest.metadata.discover import scan
from analyzer.job.grouping import find_jobs
from analyzer.job.tables import JOB_TABLES, load_job, load_jobs
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan
from tests.job_files import rank_dir, spoil

pytestmark = pytest.mark.slow  # four jobs written and read twice: the full suite, not the fast loop


def _summary(job: Path, rank: int, name: str) -> Path:
    return rank_dir(job, rank) / "ASCEND_PROFILER_OUTPUT" / name


def _jobs(root: Path) -> Path:
    """Four jobs beside each other: damaged values in a text job's files, a job whose ranks hold analysis.db
    only, a text job with a slow link (matrices) and a communication.json cut short, and a job without damage."""
    damaged = write_job(job_plan("job_slow_rank", 6, seed=61), root, folder="damaged")
    spoil(_summary(damaged, 1, "communication.json"), "Wait Time(ms)", "NaN", count=1)
    spoil(_summary(damaged, 4, "communication.json"), "Transit Size(MB)", '"abc"', count=1)
    spoil(_summary(damaged, 2, "step_trace_time.csv"), "Computing", "abc")
    write_job(job_plan("job_pipeline_imbalance", 8, seed=62), root, folder="db_form", export_type="db")
    cut = write_job(job_plan("job_slow_link", 16, seed=63), root, folder="cut")
    comm = _summary(cut, 3, "communication.json")
    comm.write_bytes(comm.read_bytes()[: comm.stat().st_size // 2])
    write_job(job_plan("job_balanced", 4, seed=64), root, folder="sound")
    return root


def _rows(con, job_id: str) -> dict[str, list[tuple]]:
    """Every job table's rows of the job, in the order they were inserted."""
    rows = "SELECT * FROM {} WHERE run_id = ? ORDER BY rowid"
    return {t: con.execute(rows.format(t), [job_id]).fetchall() for t in JOB_TABLES}


def test_jobs_read_together_get_the_rows_problems_and_notes_each_gets_alone(tmp_path):
    root = _jobs(tmp_path / "tree")
    con = connect()
    jobs = find_jobs(con, scan(root)[0], root)
    assert len(jobs) == 4
    together = load_jobs(con, jobs)
    for job, (problems, note) in zip(jobs, together, strict=True):
        alone = connect()
        alone_problems, alone_note = load_job(alone, job)
        assert _rows(con, job.job_id) == _rows(alone, job.job_id), job.job_id
        assert [p.line() for p in problems] == [p.line() for p in alone_problems] and note == alone_note
    lines = [p.line() for problems, _ in together for p in problems]
    assert any("Wait Time(ms)" in line for line in lines) and any("Computing" in line for line in lines)
    assert any("cannot read the file" in line for line in lines)  # the cut communication.json
    assert any(_rows(con, job.job_id)["job_links"] for job in jobs)  # the slow link's matrices were read
    db_form = next(job for job in jobs if job.job_id == "db_form")  # its collectives from analysis.db alone
    assert not any(r.source.has("communication") for r in db_form.ranks) and _rows(con, "db_form")["job_comm_ops"]


def test_jobs_sharing_a_file_are_read_one_by_one_each_as_alone(tmp_path):
    """No grouping gives one export to two jobs; were it to, each job is still read as alone (a problem of the
    file could not be told to one job)."""
    root = write_job(job_plan("job_slow_rank", 4, seed=65), tmp_path, folder="one")
    spoil(_summary(root, 1, "communication.json"), "Wait Time(ms)", "NaN", count=1)
    con = connect()
    [job] = find_jobs(con, scan(root)[0], root)
    twin = replace(job, job_id=job.job_id + "-twin")
    both = load_jobs(con, [job, twin])
    for one, (problems, note) in zip((job, twin), both, strict=True):
        alone = connect()
        alone_problems, alone_note = load_job(alone, one)
        assert _rows(con, one.job_id) == _rows(alone, one.job_id)
        assert [p.line() for p in problems] == [p.line() for p in alone_problems] and note == alone_note
    assert [p.line() for p in both[0][0]] == [p.line() for p in both[1][0]] != []
