"""The batch-size scaling chart (busy ratio, latency, throughput against batch size).

The sweep page and the all-runs report both draw it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from analyzer.report.charts import COLORS, figure_layout, plotly_text

if TYPE_CHECKING:  # only the all-runs page and the sweep page draw it, from Arrow rows
    import pyarrow as pa

_PANELS = ("busy ratio", "latency (ms)", "throughput (samples/s)")


def _line(x: list, y: list, name: str, color: str) -> go.Scatter:
    return go.Scatter(x=x, y=y, name=name, mode="lines+markers", line={"color": COLORS[color]})


def sweep_chart(rows: pa.Table) -> go.Figure:
    """Three panels against batch size: busy ratio, step and per-sample latency (ms), throughput."""
    data = rows.to_pydict()
    fig = make_subplots(rows=1, cols=3, subplot_titles=_PANELS)
    models = sorted({m or "" for m in data["model_name"]})
    for model in models:
        idx = [i for i, m in enumerate(data["model_name"]) if (m or "") == model]
        x = [data["batch_size"][i] for i in idx]
        name = plotly_text(model or "runs")  # model names come from the exports

        def column(key: str, scale: float = 1.0, idx: list = idx) -> list:
            return [data[key][i] / scale for i in idx]

        fig.add_trace(_line(x, column("busy_ratio"), f"{name} busy", "busy"), row=1, col=1)
        fig.add_trace(_line(x, column("step_time_us", 1000), f"{name} step", "line"), row=1, col=2)
        fig.add_trace(_line(x, column("per_sample_us", 1000), f"{name} per sample", "muted"), row=1, col=2)
        fig.add_trace(
            _line(x, column("throughput_samples_per_s"), f"{name} throughput", "computing"),
            row=1,
            col=3,
        )
    fig.update_layout(**figure_layout("Batch-size scaling", "batch size", "", height=430))
    sizes = sorted({b for b in data["batch_size"] if b})  # ticks at the measured sizes, not log minor ticks
    fig.update_xaxes(type="log", title_text="batch size", tickmode="array", tickvals=sizes, ticktext=sizes)
    # the legend below the panels: above them it covers the panel titles
    fig.update_layout(legend={"orientation": "h", "x": 0, "y": -0.3, "yanchor": "top"}, margin={"b": 110})
    return fig
