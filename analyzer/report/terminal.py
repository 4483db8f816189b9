"""Diagnosis -> a rich terminal summary: ranked findings table, then skipped and failed rules."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from analyzer.diagnosis import step_computing_text
from analyzer.report.model import Diagnosis

_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


def findings_table(d: Diagnosis, limit: int = 15) -> Table:
    table = Table(
        title=f"{escape(d.run_id)}: {len(d.findings)} finding(s), by recoverable device time",
        title_justify="left",
        show_lines=False,
    )
    for name, kw in (
        ("#", {"justify": "right"}),
        ("severity", {}),
        ("code", {}),
        ("subject", {}),
        ("impact us", {"justify": "right"}),
        ("of span", {"justify": "right"}),
        ("rule", {}),
    ):
        table.add_column(name, **kw)
    for i, f in enumerate(d.findings[:limit], 1):
        share = "" if f.span_share is None else f"{f.span_share:.1%}"
        table.add_row(
            str(i),
            f"[{_STYLE.get(f.severity, '')}]{f.severity}[/]",
            f.code,
            escape(f.subject),
            f"{f.impact_us:,.1f}",
            share,
            f.rule,
        )
    return table


def print_diagnosis(d: Diagnosis, console: Console, limit: int = 15, messages: int = 5) -> None:
    """Print the ranked findings, the text of the top ``messages``, and rules that did not run."""
    s = d.summary
    b = s.get("breakdown")
    ratio = "?" if s.get("computing_pct") is None else f"{s['computing_pct']:.1f}%"
    span = "?" if s.get("span_us") is None else f"{s['span_us']:,.1f} us"
    per_step = step_computing_text(s)
    if d.compares_runs:
        console.print(f"{d.run_id}: {s['run_count']} runs compared", markup=False)
    else:
        console.print(
            f"{d.run_id}: {s.get('span_basis') or 'span'} {span}, computing {ratio} of it"
            + (f"; {per_step}" if per_step else "")
            + f"; {s.get('step_count', 0)} step(s), {s.get('task_count', 0)} device tasks",
            markup=False,
        )
        if b:
            console.print(f"where the time went: {b['text']}", markup=False)
    if d.findings:
        console.print(findings_table(d, limit))
        if len(d.findings) > limit:
            console.print(f"... and {len(d.findings) - limit} more in the report", markup=False)
        for i, f in enumerate(d.findings[:messages], 1):
            console.print(f"{i}. [{f.code}] {f.message}", markup=False)
            console.print(f"   what to do: {f.advice_summary}", markup=False)
    else:
        console.print("no findings", markup=False)
    for o in d.outcomes:
        if o.status != "ran":
            hint = f"; enable with: {o.enable_hint}" if o.enable_hint else ""
            console.print(f"{o.status}: {o.code} {o.rule}: {o.reason}{hint}", markup=False)
