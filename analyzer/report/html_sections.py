"""HTML fragments of the run report: header (run, collection, summary, rule completeness),
findings, problems; and the all-runs header (the runs compared).

Every value that may come from an export goes through ``cell`` or ``esc`` (``html.escape``).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from analyzer.diagnosis_model import Diagnosis, RunSummary, TimeBreakdown, summary_dict
from analyzer.report import failed_ops
from analyzer.rule_engine.model import Finding, RuleOutcome

_RUN_FIELDS = (
    ("run_id", "run"),
    ("source_path", "export folder"),
    ("producer", "producer"),
    ("export_type", "export type"),
    ("layout", "layout"),
    ("device_id", "device"),
    ("rank_id", "rank"),
    ("chip", "chip"),
    ("ai_core_count", "AI Cores"),
    ("cann_version", "CANN"),
    ("torch_npu_version", "torch_npu"),
    ("model_name", "model"),
    ("batch_size", "batch size"),
    ("task_count", "device tasks"),
)
_COLLECTION_FIELDS = (
    ("profiler_level", "profiler level"),
    ("aic_metrics", "AI Core metrics"),
    ("aic_mode", "AI Core mode"),
    ("pmu_collected", "PMU pipeline metrics"),
)
_STATUS_ORDER = {"failed": 0, "skipped": 1, "ran": 2}


def esc(value: Any) -> str:
    """Escape any value for HTML text or attribute use.

    >>> esc("<img src=x onerror=alert(1)>")
    '&lt;img src=x onerror=alert(1)&gt;'
    """
    return html.escape("" if value is None else str(value), quote=True)


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
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
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


def page_header(diagnosis: Diagnosis, heading: str, cards: Sequence[str], extra: str = "") -> str:
    """The top of a report page: the heading, the finding counts and tool version, the ``cards``, the
    rule completeness table, ``extra`` (HTML) and the rule parameters."""
    return (
        f"<header><h1>{esc(heading)}</h1>{_subtitle(diagnosis)}"
        f'<div class="cards">{"".join(cards)}</div>'
        f"{_completeness(diagnosis.outcomes)}{extra}{_params(diagnosis)}</header>"
    )


# The run card's time range: the runs table's first device task start to last device task end. Not
# the summary's span_us, which is the steps' window when the run has steps (span_source).
DEVICE_TASK_RANGE_LABEL = "task range (ms)"


def _task_range_ms(run: dict[str, Any]) -> float | None:
    start, end = run.get("start_ns"), run.get("end_ns")
    return (end - start) / 1e6 if isinstance(start, int) and isinstance(end, int) else None


def _breakdown_table(breakdown: TimeBreakdown | None) -> str:
    """Where the time went, one row per part (they add up to the whole), instead of the raw dict."""
    if breakdown is None or not breakdown.parts:
        return ""
    rows = "".join(
        f'<tr><td>{esc(p.label)}</td><td class="num">{cell(float(p.us))}</td><td class="num">{p.pct:.1f}%</td></tr>'
        for p in breakdown.parts
        if p.pct or p.us > 0.0005
    )
    head = '<tr><th>part</th><th class="num">us</th><th class="num">share</th></tr>'
    title = f"<h3>Where the time of the {esc(breakdown.basis)} went</h3>"
    return f"{title}<table><thead>{head}</thead><tbody>{rows}</tbody></table>"


def _completeness(outcomes: Sequence[RuleOutcome]) -> str:
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in ("ran", "skipped", "failed")}
    ordered = sorted(outcomes, key=lambda o: (_STATUS_ORDER.get(o.status, 3), o.code, o.rule))
    rows = "".join(
        f'<tr><td>{esc(o.code)}</td><td>{esc(o.rule)}</td><td><span class="badge {esc(o.status)}">{esc(o.status)}'
        f'</span></td><td class="num">{o.finding_count}</td><td>{esc(o.reason)}</td><td>{esc(o.enable_hint)}</td></tr>'
        for o in ordered
    )
    body = (
        f'<table><thead><tr><th>code</th><th>rule</th><th>status</th><th class="num">findings</th>'
        f"<th>reason</th><th>how to enable</th></tr></thead><tbody>{rows}</tbody></table>"
        if outcomes
        else '<p class="none">No rules were run.</p>'
    )
    summary = f"Rules: {counts['ran']} ran, {counts['skipped']} skipped, {counts['failed']} failed"
    opened = " open" if counts["failed"] else ""
    return f'<details id="completeness"{opened}><summary>{summary}</summary>{body}</details>'


def header_section(diagnosis: Diagnosis) -> str:
    """Title, run metadata, collection settings, run summary and the rule completeness table."""
    run = diagnosis.run
    run_pairs = [(label, run.get(key, diagnosis.run_id if key == "run_id" else None)) for key, label in _RUN_FIELDS]
    run_pairs.append((DEVICE_TASK_RANGE_LABEL, _task_range_ms(run)))
    collection = [(label, run.get(key)) for key, label in _COLLECTION_FIELDS]
    not_collected = run.get("not_collected") or []
    collection.append(("not collected", [str(n).split(":", 1)[0] for n in not_collected] or "—"))
    summary = sorted((k, v) for k, v in summary_dict(diagnosis.summary).items() if k not in ("breakdown", "memory"))
    breakdown = diagnosis.summary.breakdown if isinstance(diagnosis.summary, RunSummary) else None
    cards = [card("Run", kv_table(run_pairs)), card("Collection", kv_table(collection))]
    if summary:
        cards.append(card("Summary", kv_table(summary) + _breakdown_table(breakdown)))
    missing = "".join(f"<li>{esc(n)}</li>" for n in not_collected)
    extra = (
        f"<details><summary>Not collected, and the settings that collect it</summary><ul>{missing}</ul></details>"
        if missing
        else ""
    )
    return page_header(diagnosis, f"npu-triage report: {diagnosis.run_id}", cards, extra)


def failed_operators_section(diagnosis: Diagnosis) -> str:
    """The operators whose task failed, with their log error records, when logs link one; else ''."""
    if not diagnosis.failed_operators:
        return ""
    rows = [failed_ops.row(op) for op in diagnosis.failed_operators]
    return (
        f'<section id="failed-operators"><h2>{esc(failed_ops.TITLE)}</h2><p>{esc(failed_ops.INTRO)}</p>'
        f"{table(failed_ops.COLUMNS, rows)}</section>"
    )


def runs_header_section(diagnosis: Diagnosis) -> str:
    """The all-runs header: the runs compared, the rules comparing them (completeness, params)."""
    runs = "".join(f"<li>{esc(r)}</li>" for r in diagnosis.run.get("runs") or [])
    return page_header(diagnosis, f"npu-triage report: {diagnosis.run_id}", [card("Runs compared", f"<ul>{runs}</ul>")])


def _subtitle(diagnosis: Diagnosis) -> str:
    version = f" · npu-triage {esc(diagnosis.tool_version)}" if diagnosis.tool_version else ""
    return f'<p class="subtitle">{_severity_counts(diagnosis.findings)}{version}</p>'


def _params(diagnosis: Diagnosis) -> str:
    params = sorted(diagnosis.params.items())
    if not params:
        return ""
    return f"<details><summary>Rule parameters</summary>{kv_table(params)}</details>"


def _severity_counts(findings: Sequence[Finding]) -> str:
    if not findings:
        return "No findings"
    parts = [f"{sum(1 for f in findings if f.severity == s)} {s}" for s in ("critical", "warning", "info")]
    return f"{len(findings)} findings: " + ", ".join(p for p in parts if not p.startswith("0 "))


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


def _heading(index: int, f: Finding) -> str:
    sev = esc(f.severity)
    return (
        f'<h3><span class="badge {sev}">{sev}</span> {index}. {esc(f.title)}</h3>'
        f'<p class="meta">{esc(f.code)} · {esc(f.rule)} · {esc(f.category)} · subject: <b>{esc(f.subject)}</b></p>'
    )


def _advice(f: Finding, same_as: int | None) -> str:
    if same_as is not None:  # the same rule's advice, already shown in full
        return f'<div class="advice"><b>Advice:</b> as for <a href="#finding-{same_as}">finding {same_as}</a>.</div>'
    steps = "".join(f"<li>{esc(s)}</li>" for s in f.advice_steps)
    return f'<div class="advice"><b>Advice:</b> {esc(f.advice_summary)}{f"<ol>{steps}</ol>" if steps else ""}</div>'


def _finding_html(index: int, f: Finding, chart: tuple[str, bool], same_as: int | None, per_step: bool) -> str:
    html_text, drawn = chart
    numbers = _numbers(f, per_step)
    text = f'<p class="message">{esc(f.message)}</p>{numbers}{"" if drawn else html_text}{_advice(f, same_as)}'
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
        f'<p class="message">{esc(f.message)}</p>{_numbers(f, per_step)}{chart_link}'
        f"{_evidence(f, folded=True)}</section>"
    )


def findings_section(diagnosis: Diagnosis, chart_for: Callable[[int, Finding, bool], tuple[str, bool]]) -> str:
    """The ranked findings, each with its evidence, advice and chart; info findings folded into one
    section at the end, each linking to its chart. ``chart_for(index, finding, draw)`` gives (HTML,
    drawn): the chart itself when ``draw`` and not drawn before, else a link to it."""
    if not diagnosis.findings:
        body = '<p class="none">No findings: every rule that ran passed (see the rules table above).</p>'
        return f'<section id="findings"><h2>Findings, ranked by recoverable time</h2>{body}</section>'
    numbered = list(enumerate(diagnosis.findings, start=1))
    per_step = diagnosis.run.get("scope") == "job"
    # Info findings are folded away only beside findings to act on; alone, they are the page.
    fold = any(f.severity != "info" for f in diagnosis.findings)
    first_of_rule: dict[str, int] = {}
    parts = []
    for i, f in numbered:
        if not (fold and f.severity == "info"):
            parts.append(_finding_html(i, f, chart_for(i, f, True), first_of_rule.get(f.rule), per_step))
            first_of_rule.setdefault(f.rule, i)
    main = "".join(parts)
    infos = [(i, f) for i, f in numbered if fold and f.severity == "info"]
    folded = ""
    if infos:
        rows = "".join(_info_html(i, f, chart_for(i, f, False)[0], per_step) for i, f in infos)
        folded = (
            f'<details id="info-findings"><summary>{len(infos)} info finding(s): context, '
            f"nothing to fix on their own</summary>{rows}</details>"
        )
    return f'<section id="findings"><h2>Findings, ranked by recoverable time</h2>{main}{folded}</section>'


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
