"""Write a diagnosis's report files (a run's, a job's or the all-runs one) and the index page of many."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from analyzer.api.report_files import write_files
from analyzer.api.report_pool import (
    ReportPool,
    ReportWorkers,
    Settings,
    job_written,
    send_job,
    start_workers,
    write_report,
)
from analyzer.api.trace import Trace
from analyzer.atomic_files import write_text_atomically
from analyzer.diagnosis_model import Diagnosis
from analyzer.report.accuracy_links import accuracy_reports

FORMATS = ("json", "md", "html")


def report(
    diagnosis: Diagnosis,
    out_dir: Path | str,
    formats: Iterable[str] = ("json", "md"),
    *,
    trace: Trace | None = None,
    self_contained: bool = False,
) -> list[Path]:
    """Write the diagnosis into ``out_dir``/<run id>/ (diagnosis.json, diagnosis.md, and report.html, or
    job.html for a job), each file atomically; returns the paths written. HTML needs the ``trace`` (its
    charts query it); its plotly.js is one file shared by the pages of ``out_dir``, or inside the page
    with ``self_contained``. Accuracy reports under ``out_dir`` whose --profile holds this run get a link
    and notes (Markdown, HTML)."""
    formats = _checked(formats, trace)
    return write_files(diagnosis, Path(out_dir), formats, trace.con if trace else None, self_contained)


def report_job(
    diagnosis: Diagnosis, settings: Settings, *, trace: Trace | None, workers: ReportWorkers | None
) -> Callable[[], list[Path]]:
    """``report`` of a job with ``settings`` (``report_settings``), by one of ``workers`` when given (the caller
    goes on meanwhile; they must not be shut down before), else here; returns what gives the paths written
    once they are."""
    con = trace.con if trace else None
    if workers is None:
        written = write_report(diagnosis, settings, con, None)
        return lambda: written
    sent = send_job(diagnosis, settings, con, workers)
    # asked for twice by diagnose (the terminal's lines, then the files): a lost worker's page written here once
    return functools.cache(lambda: job_written(diagnosis, settings, con, sent))


def report_all(
    diagnoses: Sequence[Diagnosis],
    settings: Settings,
    *,
    trace: Trace | None = None,
    on_report: Callable[[str], object] | None = None,
    workers: ReportWorkers | None = None,
) -> list[tuple[Diagnosis, list[Path]]]:
    """``report`` of each diagnosis with ``settings`` (``report_settings``; ``on_report(run_id)`` before each),
    the charts of the run pages read for all the runs at once (report/runs_reader.py); returns each diagnosis
    with the paths written. Many reports are written by worker processes: ``workers`` when given
    (``start_workers``; they are shut down here), else started here."""
    con = trace.con if trace else None
    reader = None
    if "html" in settings.formats and trace is not None:
        from analyzer.report.runs_reader import RunsReader  # polars: HTML only

        reader = RunsReader(trace.con, [d.run_id for d in diagnoses if not d.is_job and not d.compares_runs])
    pool = workers or start_workers(len(diagnoses), settings.formats)
    if pool is not None:
        return ReportPool(diagnoses, settings, con, reader).write(pool, on_report)
    written = []
    for d in diagnoses:
        if on_report is not None:
            on_report(d.run_id)
        written.append((d, write_report(d, settings, con, reader)))
        if reader is not None:
            reader.done(d.run_id)  # its page is written: its series are dropped
    return written


def report_settings(out_dir: Path | str, formats: Iterable[str], trace: Trace | None, self_contained: bool) -> Settings:
    """What the reports of one command are written with: ``formats`` checked (``_checked``), the accuracy
    reports under ``out_dir`` listed once for all of them (these reports write none)."""
    checked = _checked(formats, trace)
    return Settings(Path(out_dir), checked, self_contained, accuracy_reports(Path(out_dir)))


def _checked(formats: Iterable[str], trace: Trace | None) -> list[str]:
    """The formats, refused (before any file is written) when unknown or HTML without the trace."""
    formats = list(formats)
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"unknown report formats {unknown}; choose from {', '.join(FORMATS)}")
    if "html" in formats and trace is None:
        raise ValueError("the HTML report needs the trace its charts query: report(..., trace=trace)")
    return formats


def write_index(pages: Sequence[tuple[Diagnosis, Path]], out_dir: Path | str) -> Path | None:
    """``out_dir``/index.html linking every job's and run's page of ``pages`` (diagnosis, a file written for
    it), when there are several; None otherwise."""
    html_pages = [(d, p) for d, p in pages if p.name in ("report.html", "job.html")]
    if len(html_pages) < 2:
        return None
    from analyzer.report.index_page import render_index  # its verdict colours come with plotly: HTML only

    index = Path(out_dir) / "index.html"
    return write_text_atomically(index, render_index(html_pages, index))
