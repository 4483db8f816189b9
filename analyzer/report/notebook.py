"""What a notebook shows for a Diagnosis, a Finding and a Diff: a one-line repr and a small HTML table."""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import TYPE_CHECKING

from analyzer.diagnosis_model import RunSummary
from analyzer.rule_engine.model import Finding
from analyzer.vocabulary import SEVERITIES

if TYPE_CHECKING:
    from analyzer.api.diffs import Diff
    from analyzer.diagnosis_model import Diagnosis
    from analyzer.diff.model import RunDiff

_TOP = 10  # findings shown in a diagnosis's HTML; the rest are counted
_STYLE = "border-collapse:collapse;font-size:90%"
_CELL = "padding:2px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top"


def _severities(findings: tuple[Finding, ...]) -> str:
    counts = Counter(f.severity for f in findings)
    return ", ".join(f"{counts[s]} {s}" for s in reversed(SEVERITIES) if counts[s]) or "no findings"


def _share(f: Finding) -> str:
    return "" if f.span_share is None else f"{100 * f.span_share:.1f}%"


def finding_repr(f: Finding) -> str:
    """Finding(CODE rule-name, warning, subject='3 steps', impact 21,469.6 us, 71.2% of span)."""
    share = f", {_share(f)} of span" if f.span_share is not None else ""
    return f"Finding({f.code} {f.rule}, {f.severity}, subject={f.subject!r}, impact {f.impact_us:,.1f} us{share})"


def diagnosis_repr(d: Diagnosis) -> str:
    """Diagnosis('run id', 7 finding(s) (2 warning, 5 info); top: CODE '3 steps' 21,469.6 us)."""
    top = d.findings[0] if d.findings else None
    first = f"; top: {top.code} {top.subject!r} {top.impact_us:,.1f} us" if top else ""
    return f"Diagnosis({d.run_id!r}, {len(d.findings)} finding(s) ({_severities(d.findings)}){first})"


def _row(cells: list[str], tag: str = "td") -> str:
    return "<tr>" + "".join(f'<{tag} style="{_CELL}">{c}</{tag}>' for c in cells) + "</tr>"


def _finding_row(rank: int, f: Finding) -> str:
    return _row(
        [
            str(rank),
            escape(f.severity),
            escape(f.code),
            escape(f.subject),
            f"{f.impact_us:,.1f}",
            _share(f),
            escape(f.message),
        ]
    )


def diagnosis_html(d: Diagnosis) -> str:
    """The run's headline (span, computing share, where the time went), then its top findings as a table."""
    head = f"<b>{escape(d.run_id)}</b>: {len(d.findings)} finding(s) ({_severities(d.findings)})"
    s = d.summary
    breakdown = s.breakdown.text if isinstance(s, RunSummary) and s.breakdown else None
    lines = [f"<p>{head}</p>"] + ([f"<p>where the time went: {escape(breakdown)}</p>"] if breakdown else [])
    header = _row(["#", "severity", "code", "subject", "impact us", "of span", "message"], "th")
    rows = [_finding_row(i, f) for i, f in enumerate(d.findings[:_TOP], 1)]
    more = len(d.findings) - _TOP
    lines.append(f'<table style="{_STYLE}">{header}{"".join(rows)}</table>' if rows else "")
    lines.append(f"<p>{more} more: <code>analyzer.findings_table(d)</code></p>" if more > 0 else "")
    return "\n".join(x for x in lines if x)


def finding_html(f: Finding) -> str:
    """The finding's fields a reader needs, then its advice and the first evidence rows."""
    pairs = [
        ("rule", f"{f.code} {f.rule}"),
        ("severity", f.severity),
        ("subject", f.subject),
        ("impact", f"{f.impact_us:,.1f} us ({_share(f) or 'no span'})"),
        ("message", f.message),
        ("what to do", f.advice_summary),
    ]
    rows = "".join(_row([f"<b>{escape(k)}</b>", escape(str(v))]) for k, v in pairs)
    evidence = ""
    if f.evidence:
        head = _row([escape(c) for c in f.evidence_columns], "th")
        body = "".join(_row([escape(str(v)) for v in r]) for r in f.evidence[:5])
        evidence = f'<p>evidence (first rows)</p><table style="{_STYLE}">{head}{body}</table>'
    return f'<table style="{_STYLE}">{rows}</table>{evidence}'


def diff_repr(diff: Diff) -> str:
    """Diff(BASE -> NEW, step change +20.8%; op types: 1 added, 1 slower, 5 unchanged) in one line."""
    j, r = diff.job, diff.run
    if j is not None:
        return f"Diff(job {j.base.label} -> {j.new.label}, job step change {_pct(j.step_delta_pct)})"
    if r is None:
        return "Diff()"
    changed = Counter(t.status for t in r.types)
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(changed.items()))
    return f"Diff({r.base_label} -> {r.new_label}, step change {_pct(_rel(r))}; op types: {statuses or 'none'})"


def _rel(r: RunDiff) -> float | None:
    return None if r.step.rel_change is None else 100 * r.step.rel_change


def _pct(value: float | None) -> str:
    return "unknown" if value is None else f"{value:+.1f}%"


def diff_html(diff: Diff) -> str:
    """The one-line summary, then (two runs) the op types that changed beyond noise."""
    head = f"<p>{escape(diff_repr(diff))}</p>"
    if diff.run is None:
        return head
    changed = [t for t in diff.run.types if t.status not in ("unchanged", "within noise")]
    header = _row(["op type", "status", "change of median per step us", "base launches", "new launches"], "th")
    rows = "".join(
        _row([escape(t.op_type), escape(t.status), f"{t.delta_us:,.1f}", str(t.base_launches), str(t.new_launches)])
        for t in changed
    )
    return head + (f'<table style="{_STYLE}">{header}{rows}</table>' if rows else "<p>no op type changed</p>")
