"""The batch-size scaling chart (busy ratio, latency, throughput against batch size).

The sweep page and the all-runs report both draw it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from analyzer.report.charts import COLORS, every_axis, figure, figure_layout, panel_axes, panels_layout, plotly_text
from analyzer.report.plain_figure import Figure, trace

if TYPE_CHECKING:  # only the all-runs page and the sweep page draw it, from Arrow rows
    import pyarrow as pa

_PANELS = ("busy ratio", "latency (ms)", "throughput (samples/s)")


def _line(x: list, y: list, name: str, color: str, panel: int) -> dict:
    return trace(
        "scatter", x=x, y=y, name=name, mode="lines+markers", line={"color": COLORS[color]}, **panel_axes(panel)
    )


def sweep_chart(rows: pa.Table) -> Figure:
    """Three panels against batch size: busy ratio, step and per-sample latency (ms), throughput."""
    data = rows.to_pydict()
    traces = []
    models = sorted({m or "" for m in data["model_name"]})
    for model in models:
        idx = [i for i, m in enumerate(data["model_name"]) if (m or "") == model]
        x = [data["batch_size"][i] for i in idx]
        name = plotly_text(model or "runs")  # model names come from the exports

        def column(key: str, scale: float = 1.0, idx: list = idx) -> list:
            return [data[key][i] / scale for i in idx]

        traces += [
            _line(x, column("busy_ratio"), f"{name} busy", "busy", 1),
            _line(x, column("step_time_us", 1000), f"{name} step", "line", 2),
            _line(x, column("per_sample_us", 1000), f"{name} per sample", "muted", 2),
            _line(x, column("throughput_samples_per_s"), f"{name} throughput", "computing", 3),
        ]
    sizes = sorted({b for b in data["batch_size"] if b})  # ticks at the measured sizes, not log minor ticks
    log_x = {"type": "log", "title": {"text": "batch size"}, "tickmode": "array", "tickvals": sizes, "ticktext": sizes}
    # the legend below the panels: above them it covers the panel titles
    below = {"legend": {"orientation": "h", "x": 0, "y": -0.3, "yanchor": "top"}, "margin": {"b": 110}}
    return figure(
        traces,
        panels_layout(list(_PANELS)),
        figure_layout("Batch-size scaling", "batch size", "", height=430),
        every_axis("x", len(_PANELS), log_x),
        every_axis("y", len(_PANELS), {"rangemode": "tozero"}),  # from 0: a 10% rise does not fill the panel
        below,
    )
