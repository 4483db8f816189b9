"""Diagnoses for the terminal: rich tables that fit its width, or TSV for a pipe.

Tables wrap text at spaces only, never inside a word: a word too long for its column ends in an ellipsis
(the reports and the TSV hold it whole).

One run: its findings table, the text of the top findings, one line for the rules skipped. Many
runs: one row per run with its top finding. Failed rules get a line each.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from analyzer.diagnosis_model import (
    PREPARING_LABEL,
    Diagnosis,
    RunsSummary,
    RunSummary,
    step_computing_text,
    step_preparing_text,
)
from analyzer.report.rows import tsv_line
from analyzer.rule_engine.model import SEVERITY_RANK, Finding
from analyzer.vocabulary import SEVERITIES

_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
# position: the finding's place in its run's ranking (1 = first); not a job's rank
TSV_COLUMNS = (
    "run_id",
    "position",
    "severity",
    "code",
    "rule",
    "subject",
    "impact_us",
    "span_share",
    "title",
    "message",
)


def _severity(s: str) -> str:
    return f"[{_STYLE.get(s, '')}]{s}[/]"


def findings_table(d: Diagnosis, limit: int = 15) -> Table:
    """The ranked findings of one run; long subjects and rule names wrap at spaces, a word too long for the
    column ends in an ellipsis."""
    table = Table(
        title=f"{escape(d.run_id)}: {len(d.findings)} finding(s), by recoverable device time",
        title_justify="left",
        show_lines=False,
    )
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("code", no_wrap=True)
    table.add_column("subject", overflow="ellipsis", ratio=2)
    table.add_column("impact us", justify="right", no_wrap=True)
    table.add_column("of span", justify="right", no_wrap=True)
    table.add_column("rule", overflow="ellipsis", ratio=1)
    for i, f in enumerate(d.findings[:limit], 1):
        share = "" if f.span_share is None else f"{f.span_share:.1%}"
        table.add_row(str(i), _severity(f.severity), f.code, escape(f.subject), f"{f.impact_us:,.1f}", share, f.rule)
    return table


def skipped_line(d: Diagnosis) -> str | None:
    """One line naming the rules skipped for want of data (the report's rule table says why and how)."""
    skipped = [o for o in d.outcomes if o.status == "skipped"]
    if not skipped:
        return None
    names = ", ".join(f"{o.code} {o.rule}" for o in sorted(skipped, key=lambda o: o.code))
    return f"skipped {len(skipped)} rule(s): {names} (why and how to enable: the report's rules table)"


def memory_lines(memory: dict[str, Any] | None) -> list[str]:
    """Per device, the memory peak and how much of it the operators alive at it hold (RunSummary.memory)."""
    lines = []
    for m in memory["devices"] if memory else []:
        device = "" if m["device_id"] is None else f" (device {m['device_id']})"
        share = "?" if m["allocated_share"] is None else f"{m['allocated_share']:.1%}"
        lines.append(
            f"memory peak{device}: {m['peak_allocated_mb']:,.1f} MB allocated ({share} of the device), "
            f"{m['peak_reserved_mb'] or 0:,.1f} MB reserved; {m['alive_count']} operator allocations alive at it "
            f"hold {m['alive_mb']:,.1f} MB"
        )
    return lines


def _failed_lines(d: Diagnosis) -> list[str]:
    return [f"failed: {o.code} {o.rule}: {o.reason}" for o in d.outcomes if o.status == "failed"]


def _print_message(i: int, f: Finding, console: Console) -> None:
    """A finding's message, what explains it (a finding of its job) and what to do."""
    console.print(f"{i}. [{f.code}] {f.message}", markup=False)
    if f.explained_by is not None:
        console.print(f"   {f.explained_by.text}", markup=False)
    console.print(f"   what to do: {f.advice_summary}", markup=False)


def _summary_lines(run_id: str, s: RunSummary) -> list[str]:
    """A run's summary above its findings: span and computing share, where the time went, the host's time
    before each step's first task (when the export gives it), the memory peak."""
    ratio = "?" if s.computing_pct is None else f"{s.computing_pct:.1f}%"
    span = "?" if s.span_us is None else f"{s.span_us:,.1f} us"
    per_step = step_computing_text(s)
    lines = [
        f"{run_id}: {s.span_basis or 'span'} {span}, computing {ratio} of it"
        + (f"; {per_step}" if per_step else "")
        + f"; {s.step_count} step(s), {s.task_count} device tasks"
    ]
    if s.breakdown:
        lines.append(f"where the time went: {s.breakdown.text}")
    if preparing := step_preparing_text(s):
        lines.append(f"{PREPARING_LABEL}: {preparing}")
    return lines + list(memory_lines(s.memory))


def print_diagnosis(d: Diagnosis, console: Console, limit: int = 15, messages: int = 5) -> None:
    """Print the ranked findings, the text of the top ``messages``, and the rules that did not run."""
    s = d.summary
    if isinstance(s, RunsSummary):
        console.print(f"{d.run_id}: {s.run_count} runs compared", markup=False)
    elif isinstance(s, RunSummary):
        for line in _summary_lines(d.run_id, s):
            console.print(line, markup=False)
    if d.findings:
        console.print(findings_table(d, limit))
        if len(d.findings) > limit:
            console.print(f"... and {len(d.findings) - limit} more in the report", markup=False)
        for i, f in enumerate(d.findings[:messages], 1):
            _print_message(i, f, console)
    else:
        console.print("no findings", markup=False)
    for note in [skipped_line(d), *_failed_lines(d)]:
        if note:
            console.print(note, markup=False)


def _top(d: Diagnosis) -> str:
    f = d.findings[0] if d.findings else None
    return f"{_severity(f.severity)} {f.code} {escape(f.title)}" if f else "-"


def _overview_cells(d: Diagnosis) -> list:
    """A run's row: its span and computing share (as `diagnose` prints them for one run), its findings
    counted by severity, the top finding's recoverable time and title."""
    s = d.summary if isinstance(d.summary, RunSummary) else None  # the all-runs row has no span of its own
    span = "" if s is None or s.span_us is None else f"{s.span_us:,.1f}"
    ratio = "" if s is None or s.computing_pct is None else f"{s.computing_pct:.1f}%"
    counts = Counter(f.severity for f in d.findings)
    impact = f"{d.findings[0].impact_us:,.1f}" if d.findings else ""
    crit_warn_info = "/".join(str(counts.get(k, 0)) for k in reversed(SEVERITIES))
    # the top finding stays on one line, cut with an ellipsis (the column, wrapable, is narrowed first)
    top = Text.from_markup(_top(d), overflow="ellipsis")
    top.no_wrap = True
    return [d.run_id, span, ratio, crit_warn_info, impact, top]


def _middle_cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters: its start and its end around an ellipsis (run ids differ at
    both ends: a PROF_ folder's time stamp and suffix, a tree's run names)."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


_OVERVIEW_HEADERS = ("run", "span us", "comp.", "c/w/i", "impact us", "top finding")
_TOP_MIN = 30  # the top finding keeps this many characters, unless the run ids need them to stay distinct


def _run_width(run_ids: list[str], budget: int) -> int:
    """The run column's width: the budget (at least 12), widened until the cut ids are all distinct."""
    width, longest = max(12, budget), max(map(len, run_ids), default=0)
    while width < longest and len({_middle_cut(r, width) for r in run_ids}) < len(set(run_ids)):
        width += 1
    return width


def print_overview(diagnoses: Sequence[Diagnosis], console: Console) -> None:
    """Many runs: one line per run (and per page comparing runs): span, computing share, findings by
    severity, the top finding and its recoverable time (cut with an ellipsis to fit; the reports hold the
    details); then one line for the rules skipped, counted over the runs, and a line per failed rule."""
    rows = [_overview_cells(d) for d in diagnoses]
    numbers = sum(max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_OVERVIEW_HEADERS[1:5], 1))
    # no box: columns two spaces apart, the room left to the run ids and the top finding
    run_width = _run_width([r[0] for r in rows], console.width - numbers - 2 * (len(_OVERVIEW_HEADERS) - 1) - _TOP_MIN)
    title = f"{len(diagnoses)} report(s) (c/w/i: critical/warning/info findings; details in each report)"
    table = Table(title=title, title_justify="left", box=None, pad_edge=False, header_style="bold")
    table.add_column("run", no_wrap=True)
    for header in _OVERVIEW_HEADERS[1:5]:
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("top finding", overflow="ellipsis")
    for run_id, *rest in rows:
        table.add_row(escape(_middle_cut(run_id, run_width)), *rest)
    console.print(table)
    for line in overview_notes(diagnoses):
        console.print(line, markup=False)


def overview_notes(diagnoses: Sequence[Diagnosis]) -> list[str]:
    """Under many runs: one line for the rules skipped, counted over the runs, and a line per failed rule."""
    lines = []
    skipped = Counter((o.code, o.rule) for d in diagnoses for o in d.outcomes if o.status == "skipped")
    if skipped:
        names = ", ".join(f"{code} {rule} ({n} run(s))" for (code, rule), n in sorted(skipped.items()))
        lines.append(f"skipped: {names} (why and how to enable: each report's rules table)")
    return lines + [f"{d.run_id}: {line}" for d in diagnoses for line in _failed_lines(d)]


def findings_tsv(diagnoses: Sequence[Diagnosis], header: bool = True) -> str:
    """Every finding of every run as TSV (TSV_COLUMNS), full ids and subjects, fixed number formats."""
    lines = [tsv_line(list(TSV_COLUMNS))] if header else []
    for d in diagnoses:
        for position, f in enumerate(d.findings, 1):
            share = "" if f.span_share is None else f"{f.span_share:.4f}"
            values = [d.run_id, position, f.severity, f.code, f.rule, f.subject, f"{f.impact_us:.3f}", share, f.title]
            lines.append(tsv_line([*values, f.message]))
    return "".join(lines)


def tripping_findings(diagnoses: Sequence[Diagnosis], severity: str) -> list[tuple[str, Finding]]:
    """(run id, finding) of every finding at or above ``severity``, worst first, then in rank order."""
    floor = SEVERITY_RANK[severity]
    found = [(d.run_id, f) for d in diagnoses for f in d.findings if SEVERITY_RANK[f.severity] >= floor]
    return sorted(found, key=lambda p: -SEVERITY_RANK[p[1].severity])


def fail_on_line(severity: str, found: Sequence[tuple[str, Finding]]) -> str:
    """Which finding tripped --fail-on, and how many more did."""
    run_id, f = found[0]
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    return f"npu-triage: --fail-on {severity}: tripped by {run_id}: {f.severity} {f.code} {f.rule} ({f.subject}){more}"
