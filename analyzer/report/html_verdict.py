"""The verdict at the top of a run, job or all-runs page: where the time went (one bar), the top findings with
their recoverable time, and the one line that says how findings are ranked."""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.diagnosis_model import TimeBreakdown
from analyzer.report.charts import COLORS
from analyzer.report.html_sections import esc, short_text
from analyzer.rule_engine.model import Finding

RANKING_NOTE = (
    "Ranked by recoverable time (the device time fixing it could save), not by severity: severity says how sure "
    "and how actionable a finding is, so a critical finding with little time left to recover ranks below a "
    "warning that recovers more."
)
TOP_COUNT = 5
# A part's colour by its key, as on the step breakdown chart (charts.COLORS): computing green, communication
# red, the gaps in that chart's gap yellow (one shade per cause), launch gaps orange, free time grey.
_PART_COLOURS = {
    "computing": COLORS["computing"],
    "comm_not_overlapped": COLORS["comm"],
    "other_tasks": COLORS["other"],
    "gap_host_sync": "#d4900f",
    "gap_compile": "#b57a0c",
    "gap_memory_alloc": "#f5c45e",
    "gap_stream_wait": "#f8d78f",
    "gap_unattributed": COLORS["long_gaps"],
    "launch_gaps": COLORS["launch_gaps"],
    "free_before": COLORS["free"],
    "free_after": COLORS["free"],
}
_FALLBACK_COLOURS = ("#5d6d7e", "#a569bd", "#48c9b0", "#f4d03f", "#85929e")
_LABEL_INSIDE_PCT = 8.0  # narrower segments are named in the legend only


def _colour(index: int, part: str) -> str:
    return _PART_COLOURS.get(part, _FALLBACK_COLOURS[index % len(_FALLBACK_COLOURS)])


def breakdown_bar(breakdown: TimeBreakdown | None) -> str:
    """The time breakdown as one stacked bar (widths are the parts' shares, which add up to 100%) and its
    legend with every part's time; '' without a breakdown."""
    if breakdown is None or not breakdown.parts:
        return ""
    parts = [(i, p) for i, p in enumerate(breakdown.parts) if p.pct or p.us > 0.0005]
    segments = "".join(
        f'<span style="width:{p.pct:.2f}%;background:{_colour(i, p.part)}" title="{esc(p.label)}: '
        f'{p.pct:.1f}%">{esc(p.label) if p.pct >= _LABEL_INSIDE_PCT else ""}</span>'
        for i, p in parts
    )
    legend = "".join(
        f'<li><i style="background:{_colour(i, p.part)}"></i>{esc(p.label)} '
        f'<b>{p.us / 1000:,.3f} ms</b> <span class="pct">{p.pct:.1f}%</span></li>'
        for i, p in parts
    )
    title = f"Where the time of the {esc(breakdown.basis)} went"
    subject = f" ({esc(breakdown.subject)})" if breakdown.subject else ""
    return (
        f'<div class="breakdown"><h3>{title}{subject}</h3><div class="bar">{segments}</div>'
        f'<ul class="bar-legend">{legend}</ul></div>'
    )


def _recoverable(f: Finding, per_step: bool) -> str:
    if f.impact_us <= 0:
        return '<span class="none">nothing to recover on its own</span>'
    share = f" ({f.span_share * 100:.1f}%)" if f.span_share is not None else ""
    return f"<b>{f.impact_us / 1000:,.3f} ms{' per step' if per_step else ''}</b>{share}"


def top_findings(numbered: Sequence[tuple[int, Finding]], per_step: bool) -> str:
    """The first findings to act on (info findings only when there are no others), one line each: number,
    severity, title, subject, recoverable time; then what else the page holds."""
    act = [(i, f) for i, f in numbered if f.severity != "info"] or list(numbered)
    rows = "".join(
        f'<li><a href="#finding-{i}">{i}.</a> <span class="badge {esc(f.severity)}">{esc(f.severity)}</span> '
        f'{esc(f.title)}: {short_text(f.subject)} <span class="rec">recoverable {_recoverable(f, per_step)}'
        "</span></li>"
        for i, f in act[:TOP_COUNT]
    )
    more, infos = len(act) - min(len(act), TOP_COUNT), len(numbered) - len(act)
    rest = ", ".join(
        text for n, text in ((more, f"{more} more to act on"), (infos, f"{infos} info (context)")) if n > 0
    )
    return f'<ol class="top-findings">{rows}</ol>' + (f'<p class="more">Below: {rest}.</p>' if rest else "")


def verdict_section(numbered: Sequence[tuple[int, Finding]], breakdown: TimeBreakdown | None, per_step: bool) -> str:
    """The page's first screen: the breakdown bar (when the page has one), the top findings, the ranking line."""
    bar = breakdown_bar(breakdown)
    if not numbered:  # the findings section right below says there are none
        return f'<section id="verdict">{bar}</section>' if bar else ""
    findings = f'{top_findings(numbered, per_step)}<p class="ranking-note">{esc(RANKING_NOTE)}</p>'
    return f'<section id="verdict">{bar}{findings}</section>'
