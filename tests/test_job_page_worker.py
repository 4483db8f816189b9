"""A job's files written by a report worker (analyzer/api/reports.py report_job): the same bytes as written here,
the page never drawn in this process, and written here when the worker is lost."""

from __future__ import annotations

from pathlib import Path

import pytest

import analyzer
from analyzer.api import report_pool
from analyzer.api.reports import report_job, report_settings
from analyzer.errors import TriageError
from analyzer.report import job_page
from tests.test_report_pool import lost_workers

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ["json", "md", "html"]


@pytest.fixture(scope="module")
def job():
    trace = analyzer.load(ROOT / "fixtures" / "examples" / "job_slow_rank")
    (d,) = analyzer.diagnose_jobs(trace)
    yield trace, d
    trace.close()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _not_here(*_args, **_kwargs):
    raise AssertionError("the job page was drawn in the main process")


@pytest.mark.slow  # a worker process: the full suite runs it
def test_a_job_written_by_a_worker_is_the_one_written_here(job, tmp_path, monkeypatch):
    trace, d = job
    here = analyzer.report(d, tmp_path / "here", FORMATS, trace=trace)
    workers = report_pool.ReportWorkers(1, html=True)
    monkeypatch.setattr(job_page, "render_job_page", _not_here)  # this process only: the worker is spawned
    try:
        written = report_job(d, report_settings(tmp_path / "pool", FORMATS, trace, False), trace=trace, workers=workers)
        paths = written()
    finally:
        workers.close()
    assert [p.relative_to(tmp_path / "pool") for p in paths] == [p.relative_to(tmp_path / "here") for p in here]
    assert [p.name for p in paths] == ["diagnosis.json", "diagnosis.md", "job.html"]
    assert _files(tmp_path / "pool") == _files(tmp_path / "here")


@pytest.mark.slow  # a worker process: the full suite runs it
def test_a_job_whose_worker_is_lost_is_written_here(job, tmp_path):
    trace, d = job
    analyzer.report(d, tmp_path / "here", FORMATS, trace=trace)
    with lost_workers() as workers:
        written = report_job(d, report_settings(tmp_path / "lost", FORMATS, trace, False), trace=trace, workers=workers)
        paths = written()
    assert [p.name for p in paths] == ["diagnosis.json", "diagnosis.md", "job.html"]
    assert _files(tmp_path / "lost") == _files(tmp_path / "here")


@pytest.mark.slow  # a worker process: the full suite runs it
def test_a_job_its_worker_cannot_write_fails_with_the_workers_error_not_drawn_again(job, tmp_path, monkeypatch):
    trace, d = job
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / d.run_id).write_text("a file where the job's folder goes")
    workers = report_pool.ReportWorkers(1, html=True)
    monkeypatch.setattr(report_pool, "write_report", _not_here)  # this process only: the worker is spawned
    try:
        written = report_job(d, report_settings(tmp_path / "out", FORMATS, trace, False), trace=trace, workers=workers)
        with pytest.raises(TriageError, match=d.run_id):
            written()
    finally:
        workers.close()
