"""index.html of an output folder holding many reports: a row per job, run and all-runs page, with its top finding."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from analyzer.diagnosis_model import Diagnosis
from analyzer.report.html_sections import esc
from analyzer.report.html_style import report_page

_COUNTED = ("critical", "warning", "info")


def _counts(d: Diagnosis) -> str:
    parts = [f"{sum(f.severity == s for f in d.findings)} {s}" for s in _COUNTED]
    return ", ".join(p for p in parts if not p.startswith("0 ")) or "none"


def _is_job(page: Path) -> bool:
    return Path(page).name == "job.html"


def _row(d: Diagnosis, href: str, job: bool = False) -> str:
    top = d.findings[0] if d.findings else None
    top_html = (
        f'<span class="badge {esc(top.severity)}">{esc(top.severity)}</span> {esc(top.code)} '
        f"{esc(top.title)} (<b>{esc(top.subject)}</b>)"
        if top
        else '<span class="none">no finding</span>'
    )
    kind = "job (all ranks)" if job else "runs compared (sweep)" if d.compares_runs else "run"
    return (
        f'<tr><td><a href="{esc(href)}">{esc(d.run_id)}</a></td><td>{kind}</td>'
        f'<td class="num">{len(d.findings)}</td><td class="num">{esc(_counts(d))}</td><td>{top_html}</td></tr>'
    )


def render_index(pages: Sequence[tuple[Diagnosis, Path]], index_path: Path) -> str:
    """The index page: every report (Diagnosis and its report.html or job.html, linked relative to
    ``index_path``), jobs first, then runs in run id order, pages comparing several runs last."""
    ordered = sorted(pages, key=lambda p: (not _is_job(p[1]), p[0].compares_runs, p[0].run_id))
    folder = Path(index_path).resolve().parent
    rows = "".join(
        _row(d, Path(os.path.relpath(Path(page).resolve(), folder)).as_posix(), _is_job(page)) for d, page in ordered
    )
    jobs = sum(_is_job(page) for _, page in pages)
    runs = sum(not d.compares_runs and not _is_job(page) for d, page in pages)
    counted = f"{jobs} job(s), {runs} run(s)" if jobs else f"{runs} run(s)"
    body = (
        f'<header><h1>npu-triage reports</h1><p class="subtitle">{counted}; '
        "each row links to the report, its top finding first</p></header>"
        '<section id="reports"><table><thead><tr><th>report</th><th>kind</th><th class="num">findings</th>'
        f"<th>by severity</th><th>top finding</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )
    return report_page("npu-triage reports", body, charts=False)
