"""The batch-size sweep page: busy ratio, latency and throughput against batch size (plotly), and the verdict."""

from __future__ import annotations

import html

import plotly.graph_objects as go
import pyarrow as pa
from plotly.subplots import make_subplots

from analyzer.report.charts import COLORS, figure_layout
from analyzer.report.html import figure_html
from analyzer.report.html_style import standalone_page
from analyzer.runs.sweep import VERDICT_TEXT


def sweep_chart(rows: pa.Table) -> go.Figure:
    """Three panels against batch size: busy ratio, step and per-sample latency (ms), throughput (samples/s)."""
    data = rows.to_pydict()
    fig = make_subplots(rows=1, cols=3, subplot_titles=("busy ratio", "latency (ms)", "throughput (samples/s)"))
    models = sorted({m or "" for m in data["model_name"]})
    for model in models:
        idx = [i for i, m in enumerate(data["model_name"]) if (m or "") == model]
        x = [data["batch_size"][i] for i in idx]
        name = model or "runs"
        fig.add_trace(go.Scatter(x=x, y=[data["busy_ratio"][i] for i in idx], name=f"{name} busy",
                                 mode="lines+markers", line={"color": COLORS["busy"]}), row=1, col=1)
        fig.add_trace(go.Scatter(x=x, y=[data["step_time_us"][i] / 1000 for i in idx], name=f"{name} step",
                                 mode="lines+markers", line={"color": COLORS["line"]}), row=1, col=2)
        fig.add_trace(go.Scatter(x=x, y=[data["per_sample_us"][i] / 1000 for i in idx], name=f"{name} per sample",
                                 mode="lines+markers", line={"color": COLORS["muted"]}), row=1, col=2)
        fig.add_trace(go.Scatter(x=x, y=[data["throughput_samples_per_s"][i] for i in idx],
                                 name=f"{name} throughput", mode="lines+markers",
                                 line={"color": COLORS["computing"]}), row=1, col=3)
    fig.update_layout(**figure_layout("Batch-size scaling", "batch size", "", height=380))
    fig.update_xaxes(type="log", title_text="batch size")
    return fig


def verdict_lines(verdict: pa.Table) -> list[str]:
    """One sentence per model."""
    return [f"{v['model_name'] or 'runs'}: batch size {v['min_batch_size']} -> {v['max_batch_size']}, busy ratio "
            f"{(v['busy_ratio_at_min'] or 0):.0%} -> {(v['busy_ratio_at_max'] or 0):.0%}: {VERDICT_TEXT[v['verdict']]}"
            for v in verdict.to_pylist()]


def render_sweep_html(rows: pa.Table, verdict: pa.Table) -> str:
    """A self-contained page."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows.column_names)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in r.values()) + "</tr>"
                   for r in rows.to_pylist())
    verdicts = "".join(f"<li>{html.escape(line)}</li>" for line in verdict_lines(verdict))
    chart = figure_html(sweep_chart(rows), "sweep-scaling")
    return standalone_page("npu-triage sweep", f"<h1>Batch-size scaling</h1><ul>{verdicts}</ul>"
                           f"<div class=\"card\">{chart}</div><h2>Runs</h2>"
                           f"<div class=\"card\"><table><tr>{head}</tr>{body}</table></div>")


def _cell(value) -> str:
    return "" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)
