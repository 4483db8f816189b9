"""The reports of many runs written by a pool of worker processes (analyzer/api/report_pool.py): the same bytes as
written one by one here, a report that cannot be written named once the others are, and a page that needs the
database written by the parent."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import analyzer
from analyzer.api import report_pool
from analyzer.api.report_pool import Pages, ReportPool, ReportsNotWritten, Settings, write_pages
from analyzer.api.reports import report_all, report_settings
from analyzer.report import runs_reader, series
from analyzer.report.output_files import run_folder
from analyzer.report.runs_reader import NeedsDatabase, ReadSeries

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ["json", "md", "html"]


@pytest.fixture(scope="module")
def sweep():
    """Five runs and the all-runs report (the rules comparing them)."""
    trace = analyzer.load(ROOT / "fixtures" / "examples" / "batch_sweep")
    return trace, analyzer.diagnose_runs(trace)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _pooled(monkeypatch) -> None:
    """A pool from two reports on, two pages a task, the series read two runs at a time (three chunks)."""
    monkeypatch.setattr(report_pool, "POOL_FROM", 2)
    monkeypatch.setattr(report_pool, "TASK_PAGES", 2)
    monkeypatch.setattr(runs_reader, "CHUNK", 2)


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_reports_written_by_the_workers_are_the_ones_written_here(sweep, tmp_path, monkeypatch):
    trace, diagnoses = sweep
    assert report_pool.pool_size(len(diagnoses)) == 0  # a few reports: written here, no worker started
    here = report_all(diagnoses, report_settings(tmp_path / "here", FORMATS, trace, False), trace=trace)
    _pooled(monkeypatch)
    runs = [d.run_id for d in diagnoses if not d.compares_runs]
    settings = Settings(tmp_path / "pool", FORMATS, False, [])
    pool = ReportPool(diagnoses, settings, trace.con, runs_reader.RunsReader(trace.con, runs))
    steps: list[str] = []
    pooled = pool.write(report_pool.ReportWorkers(1, html=True), steps.append)
    assert (len(runs), len(diagnoses), pool.written_here) == (5, 6, 4)  # here: each chunk's first, the all-runs
    assert sorted(steps) == sorted(d.run_id for d in diagnoses)
    assert [(d.run_id, [p.relative_to(tmp_path / "pool") for p in paths]) for d, paths in pooled] == [
        (d.run_id, [p.relative_to(tmp_path / "here") for p in paths]) for d, paths in here
    ]
    assert _files(tmp_path / "pool") == _files(tmp_path / "here")
    assert len(_files(tmp_path / "here")) == 3 * len(diagnoses) + 1  # and plotly.js once


@contextmanager
def lost_workers() -> Iterator[report_pool.ReportWorkers]:
    """Report workers whose one worker process is killed once up, before it is given anything: every task sent
    to them is lost; ended at the end."""
    workers = report_pool.ReportWorkers(1, html=True)
    try:
        workers.executor.submit(int).result()  # the worker is up
        for process in list(workers.executor._processes.values()):
            process.kill()
            process.join(5)
        yield workers
    finally:
        workers.close(stop=True)


@pytest.mark.slow  # worker processes: the full suite runs it
def test_reports_whose_workers_are_lost_are_written_here(sweep, tmp_path, monkeypatch):
    """Workers killed before the pool sends them anything: the json and md sent ahead of the pages and the pages
    themselves are all written here, the same bytes as written one by one."""
    trace, diagnoses = sweep
    here = report_all(diagnoses, report_settings(tmp_path / "here", FORMATS, trace, False), trace=trace)
    _pooled(monkeypatch)
    runs = [d.run_id for d in diagnoses if not d.compares_runs]
    pool = ReportPool(
        diagnoses, Settings(tmp_path / "lost", FORMATS, False, []), trace.con, runs_reader.RunsReader(trace.con, runs)
    )
    with lost_workers() as workers:
        written = pool.write(workers, None)
    assert pool.text_settings is not None and pool.written_here == len(diagnoses)
    assert [(d.run_id, [p.relative_to(tmp_path / "lost") for p in paths]) for d, paths in written] == [
        (d.run_id, [p.relative_to(tmp_path / "here") for p in paths]) for d, paths in here
    ]
    assert _files(tmp_path / "lost") == _files(tmp_path / "here")


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_a_report_that_cannot_be_written_is_named_after_the_others_are(sweep, tmp_path, monkeypatch):
    trace, diagnoses = sweep
    _pooled(monkeypatch)
    assert report_pool.pool_size(len(diagnoses)) >= 2
    lost = diagnoses[3].run_id  # the second of its chunk of two: written by a worker
    blocked = run_folder(tmp_path / "out", lost)
    blocked.parent.mkdir(parents=True)
    blocked.write_text("a file where the run's folder goes", encoding="utf-8")
    with pytest.raises(ReportsNotWritten) as error:
        report_all(diagnoses, report_settings(tmp_path / "out", ["json", "html"], trace, False), trace=trace)
    message = str(error.value)
    assert message.startswith(f"1 of {len(diagnoses)} reports could not be written (the others were): {lost}: ")
    assert "could not be written" in message.split(f"{lost}: ", 1)[1]
    for d in diagnoses:
        folder = run_folder(tmp_path / "out", d.run_id)
        assert (folder / "diagnosis.json").is_file() == (d.run_id != lost), d.run_id


@pytest.mark.slow  # worker processes: the full suite runs it
def test_the_other_files_of_sent_pages_are_written_before_any_series_is_read(sweep, tmp_path, monkeypatch):
    trace, diagnoses = sweep
    _pooled(monkeypatch)
    runs = [d.run_id for d in diagnoses if not d.compares_runs]
    here = report_pool.write_report
    seen: list[list[str]] = []

    def first_page_waits(d, settings, con, reader):
        """The first page written here reads the first chunk's series: the workers write the json and md of the
        reports sent to them meanwhile (they need no series), so they appear before it is written."""
        if not seen:
            sent = runs[1::2]  # the second of each chunk of two (the first: written here)
            files = [run_folder(tmp_path, r) / name for r in sent for name in ("diagnosis.json", "diagnosis.md")]
            deadline = time.monotonic() + 60
            while not all(f.is_file() for f in files) and time.monotonic() < deadline:
                time.sleep(0.05)
            seen.append([f.relative_to(tmp_path).as_posix() for f in files if f.is_file()])
            assert len(seen[0]) == 2 * len(sent) == 4, seen
        return here(d, settings, con, reader)

    monkeypatch.setattr(report_pool, "write_report", first_page_waits)
    pool = ReportPool(
        diagnoses, Settings(tmp_path, FORMATS, False, []), trace.con, runs_reader.RunsReader(trace.con, runs)
    )
    written = pool.write(report_pool.ReportWorkers(1, html=True), None)
    assert len(seen) == 1
    assert [[p.name for p in paths] for _, paths in written] == [["diagnosis.json", "diagnosis.md", "report.html"]] * 6


@pytest.mark.slow
def test_a_page_asking_what_was_not_read_for_it_goes_back_to_the_database(sweep, tmp_path):
    trace, diagnoses = sweep
    runs = [d for d in diagnoses if not d.compares_runs][:2]
    settings = Settings(tmp_path, FORMATS, False, [])
    assert write_pages(Pages(runs, {}), settings) == [None, None]  # no series read: each to the parent
    assert [p.name for p in write_pages(Pages(runs, None), Settings(tmp_path, ["json"], False, []))[0]] == [
        "diagnosis.json"
    ]
    given = ReadSeries({}, [runs[0].run_id])
    with pytest.raises(NeedsDatabase):
        series.step_window(given, runs[0].run_id, 1)  # a step's zoom queries the database itself
    with pytest.raises(NeedsDatabase):
        series.gap_histogram(given, runs[0].run_id)


@pytest.mark.slow
def test_a_task_gets_one_table_per_query_and_each_page_its_own_rows(sweep):
    """A task's series (RunsReader.taken) are one table per query holding its runs' rows, in the task's order even
    when it is not the chunk's; each page reads from them the rows a connection gives it."""
    trace, diagnoses = sweep
    runs = [d.run_id for d in diagnoses if not d.compares_runs]
    reader = runs_reader.RunsReader(trace.con, runs)
    charts = (
        series.busy_over_time,
        series.gap_positions,
        series.gap_histogram,
        series.op_type_pareto,
        series.step_breakdown,
    )
    for chart in charts:
        chart(reader, runs[0])  # the chunk's rows read
    task = [runs[3], runs[0], runs[2]]
    taken = reader.taken(task)
    assert {len(read) for read in taken.values()} == {3}  # (no rows, the task's rows, where each run's are)
    given = ReadSeries(taken, task)
    for chart in charts:
        for run in task:
            expected = chart(trace.con, run)
            assert expected.height, (chart.__name__, run)
            assert chart(given, run).equals(expected), (chart.__name__, run)
    for _, rows, at in taken.values():
        assert rows.height == sum(n for _, n in at.values())  # the task's runs' rows only
