"""The batch-size sweep page: busy ratio, latency and throughput against batch size (plotly), and the verdict."""

from __future__ import annotations

import html

import pyarrow as pa

from analyzer.metrics.sweep import VERDICT_TEXT
from analyzer.report.html_style import report_page


def verdict_lines(verdict: pa.Table) -> list[str]:
    """One sentence per model."""
    return [
        f"{v['model_name'] or 'runs'}: batch size {v['min_batch_size']} -> {v['max_batch_size']}, busy ratio "
        f"{(v['busy_ratio_at_min'] or 0):.0%} -> {(v['busy_ratio_at_max'] or 0):.0%}: {VERDICT_TEXT[v['verdict']]}"
        for v in verdict.to_pylist()
    ]


def render_sweep_html(rows: pa.Table, verdict: pa.Table, plotly_src: str | None = None) -> str:
    """The sweep page; plotly.js inlined, or loaded from ``plotly_src`` (a shared file)."""
    # the charts' modules (polars) load only when the page is drawn, not with the sweep command
    from analyzer.report.html import figure_html
    from analyzer.report.scaling_chart import sweep_chart

    head = "".join(f"<th>{html.escape(_words(c))}</th>" for c in rows.column_names)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in r.values()) + "</tr>" for r in rows.to_pylist()
    )
    verdicts = "".join(f"<li>{html.escape(line)}</li>" for line in verdict_lines(verdict))
    chart = figure_html(sweep_chart(rows), "sweep-scaling")
    return report_page(
        "npu-triage sweep",
        f'<h1>Batch-size scaling</h1><section class="finding top" id="finding-1"><h2>Verdict</h2><ul>{verdicts}</ul>'
        "</section>"
        f'<div class="card">{chart}</div><h2>Runs</h2>'
        f'<div class="card"><table><tr>{head}</tr>{body}</table></div>',
        plotly_src,
    )


def _words(column: str) -> str:
    """A column name as a heading: step_time_us -> step time (us)."""
    for unit in ("us", "ms", "per_s"):
        if column.endswith(f"_{unit}"):
            return f"{column[: -len(unit) - 1].replace('_', ' ')} ({unit.replace('_', ' ')})"
    return column.replace("_", " ")


def _cell(value) -> str:
    return "" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)
