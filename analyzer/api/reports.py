"""Write a diagnosis's report files (a run's, a job's or the all-runs one) and the index page of many."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from analyzer.api.trace import Trace
from analyzer.atomic_files import write_text_atomically
from analyzer.diagnosis_model import Diagnosis
from analyzer.report.accuracy_links import accuracy_links, accuracy_reports
from analyzer.report.job_markdown import render_job_markdown
from analyzer.report.json_export import render_json
from analyzer.report.markdown import render_markdown
from analyzer.report.output_files import run_folder

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
    return _write(diagnosis, Path(out_dir), formats, trace.con if trace else None, self_contained)


def report_all(
    diagnoses: Sequence[Diagnosis],
    out_dir: Path | str,
    formats: Iterable[str] = ("json", "md"),
    *,
    trace: Trace | None = None,
    self_contained: bool = False,
    on_report: Callable[[str], object] | None = None,
) -> list[tuple[Diagnosis, list[Path]]]:
    """``report`` of each diagnosis (``on_report(run_id)`` before each), the charts of the run pages read
    for all the runs at once (report/runs_reader.py); returns each diagnosis with the paths written."""
    formats = _checked(formats, trace)
    con = trace.con if trace else None
    reader = None
    if "html" in formats and trace is not None:
        from analyzer.report.runs_reader import RunsReader  # polars: HTML only

        reader = RunsReader(trace.con, [d.run_id for d in diagnoses if not d.is_job and not d.compares_runs])
    written = []
    found = accuracy_reports(Path(out_dir))  # once: these reports write none
    for d in diagnoses:
        if on_report is not None:
            on_report(d.run_id)
        mine = reader if reader is not None and reader.holds(d.run_id) else None
        written.append((d, _write(d, Path(out_dir), formats, mine or con, self_contained, found)))
        if mine is not None:
            mine.done(d.run_id)  # its page is written: its series are dropped
    return written


def _checked(formats: Iterable[str], trace: Trace | None) -> list[str]:
    """The formats, refused (before any file is written) when unknown or HTML without the trace."""
    formats = list(formats)
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"unknown report formats {unknown}; choose from {', '.join(FORMATS)}")
    if "html" in formats and trace is None:
        raise ValueError("the HTML report needs the trace its charts query: report(..., trace=trace)")
    return formats


def _write(
    diagnosis: Diagnosis,
    out_dir: Path,
    formats: list[str],
    con: Any,
    self_contained: bool,
    found: list[Path] | None = None,
) -> list[Path]:
    folder = run_folder(out_dir, diagnosis.run_id)
    # accuracy reports already written under out_dir for this run (accuracy --profile) get a link and notes
    diagnosis = replace(diagnosis, accuracy_links=accuracy_links(out_dir, diagnosis.run_id, folder, found))
    written = []
    if "json" in formats:
        written.append(write_text_atomically(folder / "diagnosis.json", render_json(diagnosis)))
    if "md" in formats:
        md = render_job_markdown(diagnosis) if diagnosis.is_job else render_markdown(diagnosis)
        written.append(write_text_atomically(folder / "diagnosis.md", md))
    if "html" in formats and con is not None:  # (refused by _checked without the trace)
        written.append(_html(diagnosis, con, folder, None if self_contained else out_dir))
    return written


def _html(diagnosis: Diagnosis, con: Any, folder: Path, shared: Path | None) -> Path:
    """A run's report.html or a job's job.html; plotly.js once per output folder (``shared``), beside the
    reports, not inlined into every page (unless ``shared`` is None). plotly loads only when HTML is asked for."""
    if not diagnosis.is_job:
        from analyzer.report.html import write_html

        return write_html(diagnosis, con, folder / "report.html", shared_js=shared)
    from analyzer.report.job_page import render_job_page
    from analyzer.report.plotly_asset import plotly_src, write_plotly_js

    page = folder / "job.html"
    src = None if shared is None else plotly_src(page, write_plotly_js(shared))
    return write_text_atomically(page, render_job_page(diagnosis, con, src))


def write_index(pages: Sequence[tuple[Diagnosis, Path]], out_dir: Path | str) -> Path | None:
    """``out_dir``/index.html linking every job's and run's page of ``pages`` (diagnosis, a file written for
    it), when there are several; None otherwise."""
    html_pages = [(d, p) for d, p in pages if p.name in ("report.html", "job.html")]
    if len(html_pages) < 2:
        return None
    from analyzer.report.index_page import render_index  # its verdict colours come with plotly: HTML only

    index = Path(out_dir) / "index.html"
    return write_text_atomically(index, render_index(html_pages, index))
