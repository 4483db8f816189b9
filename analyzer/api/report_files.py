"""The files of one diagnosis (diagnosis.json, diagnosis.md, report.html or job.html), each written atomically."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from analyzer.atomic_files import write_text_atomically
from analyzer.diagnosis_model import Diagnosis
from analyzer.report.accuracy_links import accuracy_links
from analyzer.report.job_markdown import render_job_markdown
from analyzer.report.json_export import render_json
from analyzer.report.markdown import render_markdown
from analyzer.report.output_files import run_folder


def write_files(
    diagnosis: Diagnosis,
    out_dir: Path,
    formats: list[str],
    con: Any,
    self_contained: bool,
    found: list[Path] | None = None,
) -> list[Path]:
    """The diagnosis's files of ``formats`` under ``out_dir``/<run id>/; ``con`` is what its HTML charts
    query (a connection, a RunsReader or the series read for it: report/runs_reader.py)."""
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
    """A run's report.html (``report.html.write_html``) or a job's job.html; plotly.js once per output folder
    (``shared``), beside the reports, not inlined into every page (unless ``shared`` is None). plotly loads
    only when HTML is asked for."""
    if not diagnosis.is_job:
        from analyzer.report.html import write_html

        return write_html(diagnosis, con, folder / "report.html", shared)
    from analyzer.report.job_page import render_job_page
    from analyzer.report.plotly_asset import write_page

    return write_page(folder / "job.html", lambda src: render_job_page(diagnosis, con, src), shared)
