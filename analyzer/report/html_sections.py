"""HTML fragments of a report page: title, findings (numbered in page order), problems; cells and tables.

Every value that may come from an export goes through ``cell`` or ``esc`` (``html.escape``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from analyzer.diagnosis_model import Diagnosis
from analyzer.report import failed_ops
from analyzer.report.escaped_text import escaped
from analyzer.rule_engine.model import Finding


def esc(value: Any) -> str:
    """Escape any value for HTML text or attribute use.

    >>> esc("<img src=x onerror=alert(1)>")
    '&lt;img src=x onerror=alert(1)&gt;'
    """
    return escaped("html", "" if value is None else str(value))


def cell(value: Any) -> str:
    """A table cell's text: fixed float format, NULL as an em dash, lists joined; escaped.

    >>> [cell(None), cell(1234.5678), cell(0.1234567), cell(True), cell(["a", "<b>"])]
    ['—', '1,234.568', '0.1235', 'yes', 'a, &lt;b&gt;']
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) >= 1 else f"{value:.4f}"
    if isinstance(value, list | tuple):
        return esc(", ".join(str(v) for v in value))
    return esc(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]], css: str = "") -> str:
    """An HTML table; numeric cells right-aligned."""
    # a long column name may break after its underscores: the header does not set the column's width
    head = "".join(f"<th>{esc(c).replace('_', '_<wbr>')}</th>" for c in columns)
    body = "".join(
        "<tr>"
        + "".join(f'<td class="num">{cell(v)}</td>' if _is_number(v) else f"<td>{cell(v)}</td>" for v in row)
        + "</tr>"
        for row in rows
    )
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def kv_table(pairs: Iterable[tuple[str, Any]]) -> str:
    """A two-column table of labels and values (the values through ``cell``)."""
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{cell(v)}</td></tr>" for k, v in pairs)
    return f'<table class="kv"><tbody>{rows}</tbody></table>'


def card(title: str, body: str) -> str:
    """One card of a page header: a small heading over ``body`` (HTML)."""
    return f'<div class="card"><h3>{esc(title)}</h3>{body}</div>'


def failed_operators_section(diagnosis: Diagnosis) -> str:
    """The operators whose task failed, with their log error records, when logs link one; else ''."""
    if not diagnosis.failed_operators:
        return ""
    rows = [failed_ops.row(op) for op in diagnosis.failed_operators]
    return (
        f'<section id="failed-operators"><h2>{esc(failed_ops.TITLE)}</h2><p>{esc(failed_ops.INTRO)}</p>'
        f"{table(failed_ops.COLUMNS, rows)}</section>"
    )


def page_title(diagnosis: Diagnosis, heading: str) -> str:
    """The top of a report page: the heading, the finding counts, the rules run and the tool version."""
    version = f" · npu-triage {esc(diagnosis.tool_version)}" if diagnosis.tool_version else ""
    ran = sum(1 for o in diagnosis.outcomes if o.status == "ran")
    rules = f' · <a href="#completeness">{ran} of {len(diagnosis.outcomes)} rules ran</a>' if diagnosis.outcomes else ""
    return (
        f'<header><h1>{esc(heading)}</h1><p class="subtitle">{_severity_counts(diagnosis.findings)}{rules}'
        f"{version}</p></header>"
    )


SUBJECT_CHARS = 60


def short_text(value: Any, limit: int = SUBJECT_CHARS, tag: str = "b") -> str:
    """A subject cut to ``limit`` characters, the whole of it on hover; escaped.

    >>> short_text("a" * 8, 5), short_text("<b>")
    ('<b title="aaaaaaaa">aaaa…</b>', '<b>&lt;b&gt;</b>')
    """
    text = "" if value is None else str(value)
    if len(text) <= limit:
        return f"<{tag}>{esc(text)}</{tag}>"
    return f'<{tag} title="{esc(text)}">{esc(text[: limit - 1])}…</{tag}>'


def finding_cell(f: Finding | None) -> str:
    """An index row's top finding: severity badge, code, title and short subject; 'no finding' without one."""
    if f is None:
        return '<span class="none">no finding</span>'
    badge = f'<span class="badge {esc(f.severity)}">{esc(f.severity)}</span>'
    return f"{badge} {esc(f.code)} {esc(f.title)} ({short_text(f.subject)})"


def page_order(diagnosis: Diagnosis) -> list[tuple[int, Finding]]:
    """The findings as the page shows them, numbered 1, 2, 3, ... in that order: the ranked findings to act
    on, then the info findings (folded away only beside findings to act on; alone, they are the page)."""
    act = [f for f in diagnosis.findings if f.severity != "info"]
    info = [f for f in diagnosis.findings if f.severity == "info"]
    return list(enumerate([*act, *info] if act else info, start=1))


def severity_counts(findings: Sequence[Finding]) -> str:
    """The findings counted by severity, worst first, leaving out the severities with none; '' without findings.

    >>> severity_counts([])
    ''
    """
    parts = [f"{sum(1 for f in findings if f.severity == s)} {s}" for s in ("critical", "warning", "info")]
    return ", ".join(p for p in parts if not p.startswith("0 "))


def _severity_counts(findings: Sequence[Finding]) -> str:
    if not findings:
        return "No findings"
    plural = "" if len(findings) == 1 else "s"
    return f"{len(findings)} finding{plural}: " + severity_counts(findings)


def _value(value: float | None, unit: str) -> str:
    """A finding's value in its unit: ratios as percentages.

    >>> _value(0.456, "ratio"), _value(12.5, "us"), _value(24.0, "count"), _value(None, "us")
    ('45.6%', '12.500 us', '24', '—')
    """
    if value is None:
        return "—"
    if unit == "ratio":
        return f"{value * 100:.1f}%"
    if unit == "count":
        return f"{value:,.0f}"
    return f"{cell(float(value))} {esc(unit)}".strip()


def _numbers(f: Finding, per_step: bool) -> str:
    """The finding's numbers, leaving out those it does not have (no threshold, nothing recoverable);
    ``per_step``: a job finding, whose impact is per step and whose share is of the job step."""
    whole = "the job step" if per_step else "span"
    share = f" ({f.span_share * 100:.1f}% of {whole})" if f.span_share is not None else ""
    parts = [f"<span>{esc(f.metric)}: <b>{_value(f.value, f.unit)}</b></span>"]
    if f.threshold is not None:
        parts.append(f"<span>threshold: <b>{_value(f.threshold, f.unit)}</b></span>")
    if f.impact_us > 0:
        per = " per step" if per_step else ""
        parts.append(f"<span>recoverable: <b>{f.impact_us / 1000:,.3f} ms{per}</b>{share}</span>")
    parts.append(f"<span>confidence: <b>{esc(f.confidence)}</b></span>")
    return f'<div class="numbers">{"".join(parts)}</div>'


def _evidence(f: Finding, folded: bool = False) -> str:
    if not f.evidence_columns or not f.evidence:
        return ""
    rows = table(f.evidence_columns, f.evidence)
    if folded:
        count = f"{len(f.evidence)} row{'s' if len(f.evidence) != 1 else ''}"
        return f'<details class="evidence"><summary>evidence ({count})</summary>{rows}</details>'
    return f'<div class="evidence">{rows}</div>'


def _message(f: Finding) -> str:
    """The finding's message; a long subject in it cut as in the heading, the whole of it on hover; the job
    finding that explains it (Finding.explained_by)."""
    text, subject = esc(f.message), str(f.subject or "")
    if len(subject) > SUBJECT_CHARS:
        text = text.replace(esc(subject), short_text(subject, tag="span"))
    by = f.explained_by  # a rank's finding that a finding of its job explains: says so under its message
    aside = "" if by is None else "recoverable: its own part" if by.partial else f"{by.severity} on its own"
    note = "" if by is None else f'<p class="meta">{esc(by.text)} ({esc(aside)})</p>'
    return f'<p class="message">{text}</p>{note}'


def _heading(index: int, f: Finding) -> str:
    sev = esc(f.severity)
    return (
        f'<h3><span class="badge {sev}">{sev}</span> {index}. {esc(f.title)}</h3>'
        f'<p class="meta">{esc(f.code)} · {esc(f.rule)} · {esc(f.category)} · subject: {short_text(f.subject)}</p>'
    )


def _advice(f: Finding, same_as: int | None) -> str:
    if same_as is not None:  # the same rule's advice, already shown in full
        return f'<div class="advice"><b>Advice:</b> as for <a href="#finding-{same_as}">finding {same_as}</a>.</div>'
    steps = "".join(f"<li>{esc(s)}</li>" for s in f.advice_steps)
    return f'<div class="advice"><b>Advice:</b> {esc(f.advice_summary)}{f"<ol>{steps}</ol>" if steps else ""}</div>'


def _finding_html(index: int, f: Finding, chart: tuple[str, bool], same_as: int | None, per_step: bool) -> str:
    html_text, drawn = chart
    numbers = _numbers(f, per_step)
    text = f"{_message(f)}{numbers}{'' if drawn else html_text}{_advice(f, same_as)}"
    body = (
        f'<div class="finding-body"><div>{text}</div><div class="chart">{html_text}</div></div>'
        if drawn
        else f"<div>{text}</div>"
    )
    # a rule's later findings fold their evidence: the first one shows what such rows look like
    return (
        f'<section class="finding {esc(f.severity)}" id="finding-{index}">{_heading(index, f)}'
        f"{body}{_evidence(f, folded=same_as is not None)}</section>"
    )


def _info_html(index: int, f: Finding, chart_link: str, per_step: bool) -> str:
    return (
        f'<section class="finding info compact" id="finding-{index}">{_heading(index, f)}'
        f"{_message(f)}{_numbers(f, per_step)}{chart_link}"
        f"{_evidence(f, folded=True)}</section>"
    )


def findings_section(diagnosis: Diagnosis, chart_for: Callable[[int, Finding, bool], tuple[str, bool]]) -> str:
    """The findings in page order (page_order), each with its evidence, advice and chart; info findings
    beside findings to act on folded into one section at the end, each linking to its chart.
    ``chart_for(index, finding, draw)`` gives (HTML, drawn): the chart itself when ``draw`` and not drawn
    before, else a link to it."""
    heading = "<h2>Findings, ranked by recoverable time</h2>"
    if not diagnosis.findings:
        body = '<p class="none">No findings: every rule that ran passed (see the rules table below).</p>'
        return f'<section id="findings">{heading}{body}</section>'
    numbered = page_order(diagnosis)
    per_step = diagnosis.run.get("scope") == "job"
    fold = any(f.severity != "info" for f in diagnosis.findings)
    first_of_rule: dict[str, int] = {}
    parts = []
    for i, f in numbered:
        if not (fold and f.severity == "info"):
            parts.append(_finding_html(i, f, chart_for(i, f, True), first_of_rule.get(f.rule), per_step))
            first_of_rule.setdefault(f.rule, i)
    infos = [(i, f) for i, f in numbered if fold and f.severity == "info"]
    folded = ""
    if infos:
        rows = "".join(_info_html(i, f, chart_for(i, f, False)[0], per_step) for i, f in infos)
        folded = (
            f'<details id="info-findings"><summary>{len(infos)} info finding(s): context, '
            f"nothing to fix on their own</summary>{rows}</details>"
        )
    return f'<section id="findings">{heading}{"".join(parts)}{folded}</section>'


def accuracy_section(diagnosis: Diagnosis) -> str:
    """The accuracy reports of this run (accuracy --profile into the same --out) and what they judged, per
    operator type; empty when there are none."""
    parts = []
    for link in diagnosis.accuracy_links:
        files = link["files"]
        href = files.get("html") or files.get("md") or files.get("json")
        notes = [(n["op_type"], n["note"]) for n in link["notes"]]
        none = '<p class="none">No operator judged divergent.</p>'
        body = table(("operator type", "accuracy"), notes) if notes else none
        parts.append(
            f'<p><a href="{esc(href)}">Accuracy of {esc(link["dump"])} against {esc(link["reference"])}</a></p>{body}'
        )
    return f'<section id="accuracy"><h2>Accuracy</h2>{"".join(parts)}</section>' if parts else ""


def problems_section(diagnosis: Diagnosis) -> str:
    """Ingest problems: what could not be read, where, and what to do."""
    keys = ("severity", "file", "location", "problem", "hint")
    if not diagnosis.problems:
        body = '<p class="none">None: every file found was read.</p>'
    else:
        body = table(keys, [tuple(p.get(k) for k in keys) for p in diagnosis.problems])
    return f'<section id="problems"><h2>Ingest problems</h2>{body}</section>'
