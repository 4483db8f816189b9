"""An accuracy report as an offline HTML page (accuracy.html): findings, heatmaps of where the error sits, operators."""

from __future__ import annotations

from html import escape

from analyzer.accuracy.judge import AccuracyReport
from analyzer.accuracy.report.cells import STATS_COLUMNS, operator_table, roles, stats_cells
from analyzer.accuracy.report.heatmaps import location_figure
from analyzer.report.html_style import report_page

MAX_MAPS = 12


def _table(head, rows, classes: list[str] | None = None) -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join(
        f'<tr class="{escape((classes or [""] * len(rows))[i])}">'
        + "".join(f"<td>{escape(str(c))}</td>" for c in r)
        + "</tr>"
        for i, r in enumerate(rows)
    )
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _findings(report: AccuracyReport) -> str:
    if not report.findings:
        return '<p class="none">No finding: every compared tensor agrees with its reference within the thresholds.</p>'
    items = []
    for n, f in enumerate(report.findings, start=1):
        steps = "".join(f"<li>{escape(s)}</li>" for s in f.advice_steps)
        items.append(
            f'<div class="card finding {escape(f.severity)}" id="finding-{n}">'
            f'<h3>{n}. <span class="badge {escape(f.severity)}">{escape(f.severity)}</span> '
            f"{escape(f.code)} {escape(f.rule)}: {escape(f.subject)}</h3><p>{escape(f.message)}</p>"
            f"<p><b>What to do:</b> {escape(f.advice_summary)}</p><ol>{steps}</ol></div>"
        )
    return '<div class="cards">' + "".join(items) + "</div>"


def _maps(report: AccuracyReport) -> str:
    culprits, _ = roles(report.findings)
    order = {(o["op_name"], o["occurrence"]): o["exec_order"] for o in report.operators}

    def key(loc):
        name = loc["op_name"] + (f" #{loc['occurrence']}" if loc["occurrence"] else "")
        return (name not in culprits, order.get((loc["op_name"], loc["occurrence"]), 0), loc["slot_index"])

    parts = []
    for n, loc in enumerate(sorted(report.locations, key=key)[:MAX_MAPS]):
        fig = location_figure(loc)
        chart = fig.to_html(include_plotlyjs=False, full_html=False, div_id=f"error-map-{n}")
        title = f"{loc['op_name']} output {loc['slot_index']}: {loc['verdict']}"
        parts.append(f'<div class="card"><h3>{escape(title)}</h3><p>{escape(loc["detail"])}</p>{chart}</div>')
    return "".join(parts) or '<p class="none">No tensor differs enough to be located.</p>'


def _extras(report: AccuracyReport) -> str:
    """The unpaired tensors and the problems, when there are any."""
    html = ""
    if report.stats:
        rows = [stats_cells(r) for r in report.stats]
        html += f"<h2>Statistics dump (first {len(rows)} rows)</h2>{_table(STATS_COLUMNS, rows)}"
    if report.unpaired:
        rows = [[u["side"], u["op_name"], f"{u['slot']} {u['slot_index']}", u["reason"], u["source_file"]]
                for u in report.unpaired]  # fmt: skip
        html += f"<h2>Unpaired tensors</h2>{_table(('side', 'operator', 'tensor', 'reason', 'file'), rows)}"
    if report.problems:
        html += "<h2>Problems</h2><ul>" + "".join(f"<li>{escape(p.line())}</li>" for p in report.problems) + "</ul>"
    return html


def render_html(report: AccuracyReport, plotly_src: str | None) -> str:
    """The page; plotly.js from ``plotly_src`` (a shared file beside it) or inlined when None."""
    head, rows = operator_table(report)
    c = report.counts
    body = (
        f"<h1>Accuracy: {escape(report.dump)} against {escape(report.reference)}</h1>"
        f'<p class="subtitle">{c["compared"]} tensor pair(s) compared, {c["unpaired"]} unpaired; '
        f"{len(report.findings)} finding(s)</p>"
        f"<h2>Findings</h2>{_findings(report)}"
        f"<h2>Where the error sits</h2>{_maps(report)}"
        f"<h2>Operators in execution order</h2>{_table(head, rows)}{_extras(report)}"
    )
    return report_page(f"Accuracy {report.run_id}", body, plotly_src)
