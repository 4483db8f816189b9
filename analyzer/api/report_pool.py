"""The report files of many runs written on all the cores: this process reads the pages' series (a chunk of
runs at a time, report/runs_reader.py) while worker processes render and write the files from them.

Workers are spawned (no connection, no DuckDB or polars threads inherited) and never query: a page that asks
what was not read for it (a step's zoom) is written here afterwards. Each file is written atomically by whoever
renders it, from the same data, so the files are the same whatever order the workers finish in.

The json and md files of the reports whose pages the workers draw are sent first, apart from the pages: they need
no series, so the workers write them while this process reads the first chunk's series, instead of waiting for it.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from analyzer.api.report_files import write_files
from analyzer.diagnosis_model import Diagnosis
from analyzer.errors import TriageError, first_line
from analyzer.runs.worker_end import StartedPool, start_worker
from analyzer.stop_signal import ctrl_c_ignored

# Fewer reports are written in this process: starting workers (each imports the renderers) costs more than it saves.
POOL_FROM = 256
TASK_PAGES = 16  # reports per task: small enough to share the work evenly, large enough to send few messages


class ReportsNotWritten(TriageError):
    """Some reports of many could not be written (the others were); names each that failed."""


@dataclass(frozen=True)
class Settings:
    """What every report of the pool is written with."""

    out_dir: Path
    formats: list[str]
    self_contained: bool
    found: list[Path]  # accuracy reports under out_dir (report/accuracy_links.py)


@dataclass(frozen=True)
class Pages:
    """A task: the diagnoses of some runs and, for HTML, the series read for their pages."""

    diagnoses: list[Diagnosis]
    read: dict[tuple, Any] | None
    job: Any = None  # a job's page: its series (report/job_page.py JobSeries), read from the database here


def pool_size(count: int) -> int:
    """Worker processes for ``count`` reports: 0 (write them here) for a few reports or on one core."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 0 if count < POOL_FROM or cores < 2 else cores


class ReportWorkers(StartedPool):
    """The worker processes of a report pool, started before its reports are known: a command that will write
    many reports starts them before it reads its runs, so that each worker's start (a new interpreter importing
    the renderers) overlaps the reading instead of delaying the first pages. ``close`` ends them when unused."""

    def __init__(self, workers: int, html: bool) -> None:
        super().__init__(workers, _start, (html,))


def start_workers(count: int, formats: Sequence[str]) -> ReportWorkers | None:
    """Workers for a command about to write ``count`` reports of ``formats``, started now; None when the reports
    are few enough to be written in the command's own process (``pool_size``)."""
    workers = pool_size(count)
    return ReportWorkers(workers, "html" in formats) if workers else None


def _start(watched: Connection, html: bool) -> None:
    """A worker's start: its end with the driver; polars on one thread (its tables are a page's, small); the
    page renderers imported now, while this process reads the first pages' series."""
    os.environ["POLARS_MAX_THREADS"] = "1"  # read by polars on import, which comes after
    start_worker(watched)
    if html:
        import analyzer.report.html  # noqa: F401


def write_report(d: Diagnosis, settings: Settings, con: Any, reader: Any) -> list[Path]:
    """The files of ``d`` written in this process: its page's series from ``reader`` (a RunsReader or None) when
    it holds the run, else from ``con``."""
    source = reader if reader is not None and reader.holds(d.run_id) else con
    return write_files(d, settings.out_dir, settings.formats, source, settings.self_contained, settings.found)


def write_pages(pages: Pages, settings: Settings) -> list[list[Path] | str | None]:
    """In a worker: per diagnosis the paths written, None when its page needs the database, or the error."""
    con: Any = None
    needs_database: tuple[type[Exception], ...] = ()
    if pages.read is not None:
        from analyzer.report.runs_reader import NeedsDatabase, ReadSeries  # polars: HTML only

        con, needs_database = ReadSeries(pages.read, [d.run_id for d in pages.diagnoses]), (NeedsDatabase,)
    done: list[list[Path] | str | None] = []
    for d in pages.diagnoses:
        try:
            done.append(
                write_files(d, settings.out_dir, settings.formats, con, settings.self_contained, settings.found)
            )
        except needs_database:
            done.append(None)
        except Exception as exc:  # this report is lost, not the others: said once all are written
            done.append(f"{d.run_id}: {first_line(exc)}")
    return done


def send_job(d: Diagnosis, settings: Settings, con: Any, workers: ReportWorkers) -> Future | None:
    """The job's files written by one of ``workers``, its page's series read here first: the page (its rank
    heat map the longest to draw) is drawn while this process judges the ranks. ``job_written`` takes it; None
    when the pool is broken (a worker died: killed, out of memory), and then ``job_written`` writes them here."""
    job = None
    if "html" in settings.formats and con is not None:
        from analyzer.report.job_page import read_job_series

        job = read_job_series(con, d.run_id)
    try:
        with ctrl_c_ignored():
            return workers.executor.submit(write_job, Pages([d], None, job), settings)
    except BrokenProcessPool:
        return None


def write_job(pages: Pages, settings: Settings) -> list[Path]:
    """In a worker: the paths written for the job of ``pages`` (its page's series: ``pages.job``); what stops
    them is raised where they are awaited (``job_written``)."""
    (d,) = pages.diagnoses
    return write_files(d, settings.out_dir, settings.formats, pages.job, settings.self_contained, settings.found)


def job_written(d: Diagnosis, settings: Settings, con: Any, sent: Future | None) -> list[Path]:
    """The paths written for the job sent by ``send_job``; written here when no worker could (the pool broken,
    or its worker died while writing them). What stopped a worker writing them is raised, as here."""
    if sent is not None:
        try:
            return sent.result()
        except BrokenProcessPool:  # its worker died (killed, out of memory)
            pass
    return write_report(d, settings, con, None)


class ReportPool:
    """Writes the reports of ``diagnoses`` with ``workers`` processes; ``reader`` (a RunsReader, HTML) holds
    the series of the run pages, ``con`` the connection for the rest."""

    def __init__(self, diagnoses: Sequence[Diagnosis], settings: Settings, con: Any, reader: Any) -> None:
        self.diagnoses, self.settings, self.con, self.reader = list(diagnoses), settings, con, reader
        self.written: dict[int, list[Path]] = {}
        self.errors: list[str] = []
        self.written_here = 0  # reports written in this process: a group's first, those a worker gave back
        # with a reader, the reports whose pages are sent have their other files sent first (``_send_text``):
        # the settings of each part, and per report its text files' paths (or error) until its page is written
        text = [f for f in settings.formats if f != "html"]
        split = reader is not None and bool(text) and "html" in settings.formats
        self.text_settings = replace(settings, formats=text) if split else None
        self.page_settings = replace(settings, formats=["html"]) if split else settings
        self.text: dict[int, list[Path] | str] = {}
        self.text_tasks: list[tuple[list[int], Future]] = []

    def write(
        self, workers: ReportWorkers, on_report: Callable[[str], object] | None
    ) -> list[tuple[Diagnosis, list[Path]]]:
        """Every report written (each diagnosis with its paths, in order) by ``workers`` (``start_workers``),
        shut down at the end; ReportsNotWritten after the others are written when some could not be."""
        self.on_report = on_report
        try:
            self._run(workers.executor)
        except BaseException:
            workers.close(stop=True)
            raise
        finally:
            workers.close()
        if self.errors:
            count = f"{len(self.errors)} of {len(self.diagnoses)} reports could not be written (the others were)"
            raise ReportsNotWritten(f"{count}: " + "; ".join(self.errors))
        return [(d, self.written[i]) for i, d in enumerate(self.diagnoses)]

    def _run(self, pool: ProcessPoolExecutor) -> None:
        """Group by group: its first report here (which reads the group's series), the others sent to the
        workers; a group's results are taken once the next group's series are read."""
        waiting: deque[list[tuple[list[int], Future]]] = deque()
        groups = self._groups()
        self._send_text(pool, [i for _, there in groups for i in there])
        for here, there in groups:
            for i in here:
                self._write_here(i)
            with ctrl_c_ignored():  # the workers are started as work is submitted
                waiting.append(
                    [self._submit(pool, there[k : k + TASK_PAGES]) for k in range(0, len(there), TASK_PAGES)]
                )
            while len(waiting) > 1:
                self._take(waiting.popleft())
        while waiting:
            self._take(waiting.popleft())

    def _groups(self) -> list[tuple[list[int], list[int]]]:
        """(written here, sent to the workers): without a reader every report is sent; with one, per chunk of
        its runs the first is written here and the others sent; the other reports (a job, all runs) here."""
        if self.reader is None:
            return [([], list(range(len(self.diagnoses))))]
        chunks: dict[int, list[int]] = {}
        alone: list[int] = []
        for i, d in enumerate(self.diagnoses):
            chunk = self.reader.chunk_of(d.run_id)
            (alone if chunk is None else chunks.setdefault(chunk, [])).append(i)
        return [*(([c[0]], c[1:]) for c in chunks.values()), *(([i], []) for i in alone)]

    def _send_text(self, pool: ProcessPoolExecutor, sent: list[int]) -> None:
        """The json and md files of the reports ``sent`` (whose pages the workers draw) sent to the workers before
        any page, when the formats are split (``text_settings``)."""
        if self.text_settings is None:
            return
        with ctrl_c_ignored():
            for k in range(0, len(sent), TASK_PAGES):
                indices = sent[k : k + TASK_PAGES]
                self.text_tasks.append(self._submit(pool, indices, self.text_settings))

    def _take_text(self) -> None:
        """The results of the text tasks (sent before any page, so done first); a task whose worker was lost
        written here."""
        assert self.text_settings is not None
        for indices, future in self.text_tasks:
            try:
                results = future.result()
            except Exception:  # the worker process died (killed, out of memory): these files are written here
                results = [self._write_text_here(i) for i in indices]
            self.text.update(zip(indices, results, strict=True))
        self.text_tasks = []

    def _write_text_here(self, i: int) -> list[Path] | str:
        assert self.text_settings is not None
        d = self.diagnoses[i]
        try:
            return write_report(d, self.text_settings, None, None)
        except Exception as exc:  # as in a worker: the others are written, this one is named at the end
            return f"{d.run_id}: {first_line(exc)}"

    def _submit(
        self, pool: ProcessPoolExecutor, indices: list[int], text_settings: Settings | None = None
    ) -> tuple[list[int], Future]:
        """A task writing the reports ``indices``: their pages (with the series read for them), or with
        ``text_settings`` their other files."""
        diagnoses = [self.diagnoses[i] for i in indices]
        pages = text_settings is None and self.reader is not None
        read = self.reader.taken([d.run_id for d in diagnoses]) if pages else None
        try:
            return indices, pool.submit(write_pages, Pages(diagnoses, read), text_settings or self.page_settings)
        except BrokenProcessPool as exc:  # a worker died (killed, out of memory): these pages are written here
            lost: Future = Future()
            lost.set_exception(exc)
            return indices, lost

    def _take(self, tasks: list[tuple[list[int], Future]]) -> None:
        """The results of a group's tasks; a page that needs the database, or whose worker was lost, written here."""
        if self.text_tasks:
            self._take_text()
        for indices, future in tasks:
            try:
                results = future.result()
            except Exception:  # the worker process died (killed, out of memory): its pages are written here
                results = [None] * len(indices)
            for i, result in zip(indices, results, strict=True):
                if result is None:
                    self._write_here(i, self.page_settings)
                    continue
                self._done(i, result)

    def _write_here(self, i: int, settings: Settings | None = None) -> None:
        """Report ``i`` written here with ``settings`` (all its files by default; its page alone when its other
        files were sent apart)."""
        self.written_here += 1
        d = self.diagnoses[i]
        paths: list[Path] | str
        try:
            paths = write_report(d, settings or self.settings, self.con, self.reader)
        except Exception as exc:  # as in a worker: the others are written, this one is named at the end
            paths = f"{d.run_id}: {first_line(exc)}"
        self._done(i, paths)

    def _done(self, i: int, result: list[Path] | str) -> None:
        """Report ``i`` written (its paths, with its text files' when sent apart, or the first error of its parts)."""
        text = self.text.pop(i, [])
        result = text if isinstance(text, str) else result if isinstance(result, str) else [*text, *result]
        d = self.diagnoses[i]
        if isinstance(result, str):
            self.errors.append(result)
        else:
            self.written[i] = result
        if self.reader is not None:
            self.reader.done(d.run_id)  # its page is written: its series are dropped
        if self.on_report is not None:
            self.on_report(d.run_id)
