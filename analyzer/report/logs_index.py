"""logs-index.html of a log folder holding several collections: a row per collection, with its first finding."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from analyzer.logs.model import LogReport
from analyzer.report.html_sections import esc, finding_cell, severity_counts
from analyzer.report.html_style import report_page

_COUNTED = ("critical", "warning", "info")


def _row(report: LogReport, href: str) -> str:
    s, top = report.summary, (report.findings[0] if report.findings else None)
    return (
        f'<tr><td><a href="{esc(href)}">{esc(report.run_id)}</a></td><td class="num">{s["files"]}</td>'
        f'<td class="num">{s["records"]}</td><td class="num">{s["error_records"]}</td>'
        f'<td class="num">{esc(severity_counts(report.findings) or "none")}</td><td>{finding_cell(top)}</td></tr>'
    )


def worst_first_key(report: LogReport) -> tuple[int, int, int, str]:
    """Worst first: more critical findings, then more warnings, then more error records, then by name."""
    count = {sev: sum(f.severity == sev for f in report.findings) for sev in _COUNTED}
    return (-count["critical"], -count["warning"], -int(report.summary.get("error_records") or 0), report.run_id)


def render_logs_index(pages: Sequence[tuple[LogReport, Path]], index_path: Path) -> str:
    """The index page: every collection's report (its logs.html, linked relative to ``index_path``), worst
    first (worst_first_key)."""
    folder = Path(index_path).resolve().parent
    ordered = sorted(pages, key=lambda page: worst_first_key(page[0]))
    rows = "".join(_row(r, Path(os.path.relpath(Path(p).resolve(), folder)).as_posix()) for r, p in ordered)
    body = (
        f'<header><h1>npu-triage logs</h1><p class="subtitle">{len(pages)} log collections, each judged on its '
        "own, worst first (critical, then warning findings, then error records); each row links to its report, "
        "the first failure first</p></header>"
        '<section id="reports"><table><thead><tr><th>collection</th><th class="num">files</th>'
        '<th class="num">records</th><th class="num">errors</th><th>findings</th><th>top finding</th></tr>'
        f"</thead><tbody>{rows}</tbody></table></section>"
    )
    return report_page("npu-triage logs", body, charts=False)
