"""LogReport -> logs.html: one offline page, the failure and the records around it first."""

from __future__ import annotations

from typing import Any

from analyzer.logs.model import LogReport
from analyzer.report.html_sections import esc
from analyzer.report.html_style import report_page
from analyzer.rule_engine.model import Finding

_EXTRA_CSS = """<style>
table.records td { font-family: ui-monospace, monospace; font-size: 12px; vertical-align: top; white-space: nowrap; }
table.records td:last-child { white-space: pre-wrap; word-break: break-word; }
table.records tr.at td { background: #fde2e1; font-weight: 600; }
.lvl-ERROR { color: #b42318; } .lvl-WARNING { color: #b54708; }
</style>"""


def _finding(rank: int, f: Finding) -> str:
    steps = "".join(f"<li>{esc(s)}</li>" for s in f.advice_steps)
    return (
        f'<section class="finding {esc(f.severity)}" id="finding-{rank}">'
        f"<h3>{rank}. {esc(f.code)} {esc(f.rule)} <span class='sev'>({esc(f.severity)})</span>: "
        f"{esc(f.title)}</h3><p><b>{esc(f.subject)}</b></p><p class='message'>{esc(f.message)}</p>"
        f"<p><i>{esc(f.advice_summary)}</i></p><ol>{steps}</ol></section>"
    )


def _records(columns: tuple[str, ...], rows: tuple[tuple[Any, ...], ...]) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = []
    level_at = columns.index("level") if "level" in columns else None
    for row in rows:
        cls = "at" if row and row[0] == ">>" else ""
        level = row[level_at] if level_at is not None else ""
        cells = "".join(f"<td class='lvl-{esc(str(level))}'>{esc(v)}</td>" for v in row)
        body.append(f"<tr class='{cls}'>{cells}</tr>")
    return f"<table class='records'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _summary(r: LogReport) -> str:
    s = r.summary
    return (
        f"<p>{s.get('files')} file(s) ({esc(s.get('layouts') or 'none')}), {s.get('records')} record(s), "
        f"{s.get('unparsed_lines')} line(s) that are not records, {s.get('files_skipped')} file(s) skipped, "
        f"{s.get('not_log_files', 0)} file(s) that are not logs; "
        f"{s.get('error_records')} error and {s.get('warning_records')} warning record(s). The run: "
        f"{esc(s.get('run_start') or '?')} to {esc(s.get('run_end') or '?')} (log wall clock), "
        f"{s.get('sessions')} session(s), {s.get('ranks')} rank(s).</p>"
        + (f"<p>Placed on the profile's timeline: {esc(placed)}.</p>" if (placed := r.placed_text()) else "")
    )


def render_logs_html(r: LogReport) -> str:
    """The HTML page of a log folder's report (no scripts, no network)."""
    parts = [_EXTRA_CSS, f"<h1>Logs: {esc(r.run_id)}</h1>", _summary(r)]
    if not r.findings:
        parts.append("<p class='none'>No finding: no error in the run's logs, no repeated warning.</p>")
    parts += [_finding(1, f) for f in r.findings[:1]]
    if r.context:
        parts += ["<h2>The records around it</h2>", _records(r.context_columns, r.context)]
    if len(r.findings) > 1:
        parts.append("<h2>Other findings</h2>")
        parts += [_finding(i, f) for i, f in enumerate(r.findings[1:], start=2)]
    if r.problems:
        parts.append("<h2>Problems</h2><ul>" + "".join(f"<li>{esc(p)}</li>" for p in r.problems) + "</ul>")
    return report_page(f"Logs: {r.run_id}", "\n".join(parts), charts=False)
