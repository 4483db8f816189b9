"""LogReport -> logs.md: the failure on top, the records around it, then the other findings and the summary."""

from __future__ import annotations

from analyzer.logs.model import LogReport
from analyzer.report.markdown import finding_lines, md_table, md_text


def _summary(r: LogReport) -> list[str]:
    s = r.summary
    return [
        "## What was read",
        "",
        f"{s.get('files')} file(s) ({s.get('layouts') or 'none'}), {s.get('records')} record(s), "
        f"{s.get('unparsed_lines')} line(s) that are not records (counted, not read), "
        f"{s.get('files_skipped')} file(s) skipped, {s.get('not_log_files', 0)} file(s) that are not logs; "
        f"{s.get('error_records')} error and {s.get('warning_records')} warning record(s).",
        "",
        f"The run: {s.get('run_start') or '?'} to {s.get('run_end') or '?'} (log wall clock), "
        f"{s.get('sessions')} session(s) in the folder, {s.get('ranks')} rank(s).",
        "",
    ] + ([f"Placed on the profile's timeline: {placed}.", ""] if (placed := r.placed_text()) else [])


def render_logs_markdown(r: LogReport) -> str:
    """The Markdown report of a log folder."""
    lines = [f"# Logs: {r.run_id}", ""]
    if not r.findings:
        lines += ["No finding: no error in the run's logs, no repeated warning.", ""]
    for rank, f in enumerate(r.findings[:1], start=1):
        lines += finding_lines(rank, f, recoverable=False)
    if r.context:
        lines += (
            ["## The records around it", ""]
            + md_table(list(r.context_columns), [list(row) for row in r.context])
            + [""]
        )
    if len(r.findings) > 1:
        lines += ["## Other findings", ""]
        for rank, f in enumerate(r.findings[1:], start=2):
            lines += finding_lines(rank, f, recoverable=False)
    lines += _summary(r)
    skipped = [o for o in r.outcomes if o.status != "ran"]
    if skipped:
        lines += (
            ["## Rules not run", ""] + [f"- {o.code} {o.rule}: {o.status}, {md_text(o.reason)}" for o in skipped] + [""]
        )
    if r.problems:
        lines += ["## Problems", ""] + [f"- {md_text(p)}" for p in r.problems] + [""]
    return "\n".join(lines)
