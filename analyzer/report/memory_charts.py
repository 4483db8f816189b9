"""Pure chart builders of memory and of the shared time axis: series tables in, plotly Figures out.

Every chart here counts its x axis in ms from the run's first device task and takes the page's shared
x range (memory_series.time_range), so the compute, bandwidth, memory and core charts line up; the
timeline chart stacks them in one figure with one x axis. A chart or a panel without data says why.
"""

from __future__ import annotations

from typing import cast

import polars as pl

from analyzer.report.charts import (
    COLORS,
    busy_trace,
    column_lists,
    figure,
    figure_layout,
    hbm_traces,
    not_collected_figure,
    plotly_text,
    rows_equal,
    subplots_layout,
)
from analyzer.report.plain_figure import Figure, trace

# component -> line colour; the total (PTA+GE) drawn strongest
_COMPONENT_COLORS = ["#2f6db5", "#3a7d44", "#9b59b6", "#e07b39", "#c0392b", "#7f8c8d"]
X_TITLE = "time from first task (ms)"
_STYLE = {"gridcolor": "#e9edf3", "linecolor": "#c5ccd6", "showline": True, "ticks": "outside", "automargin": True}


def _range(x_range: tuple[float, float] | None) -> dict:
    return {"range": list(x_range)} if x_range else {}


def step_shapes(steps: pl.DataFrame, yref: str = "paper", xref: str = "x") -> list[dict]:
    """A dotted vertical line at each step start (and the last step's end)."""
    marks = steps["start_ms"].to_list() + steps["end_ms"].tail(1).to_list() if not steps.is_empty() else []
    line = {"color": COLORS["muted"], "dash": "dot", "width": 1}
    return [
        {"type": "line", "xref": xref, "yref": yref, "x0": x, "x1": x, "y0": 0, "y1": 1, "line": line} for x in marks
    ]


def memory_traces(mem: pl.DataFrame, axes: dict | None = None) -> list[dict]:
    """Allocated (solid) and reserved (dashed) lines per component, the total component first."""
    traces = []
    table = column_lists(mem, ("component", "offset_ms", "allocated_mb", "reserved_mb"))
    for i, component in enumerate(dict.fromkeys(table["component"])):
        part = rows_equal(table, "component", component, ("offset_ms", "allocated_mb", "reserved_mb"))
        color = _COMPONENT_COLORS[i % len(_COMPONENT_COLORS)]
        name = plotly_text(component)
        for column, kind, dash in (("allocated_mb", "allocated", "solid"), ("reserved_mb", "reserved", "dash")):
            if all(v is None for v in part[column]):
                continue
            traces.append(
                trace(
                    "scatter",
                    x=part["offset_ms"],
                    y=part[column],
                    mode="lines",
                    name=f"{name} {kind}",
                    line={"color": color, "width": 2 if i == 0 else 1.2, "dash": dash, "shape": "hv"},
                    hovertemplate=f"%{{x:.3f}} ms: {name} {kind} %{{y:.1f}} MB<extra></extra>",
                    **(axes or {}),
                )
            )
    return traces


def memory_chart(
    mem: pl.DataFrame, steps: pl.DataFrame, x_range: tuple[float, float] | None = None, device_mb: float | None = None
) -> Figure:
    """Allocated and reserved memory over time per component, step boundaries dotted, the chip's memory
    as the limit line when the run comes within half of it."""
    title = "Device memory over time (allocated solid, reserved dashed)"
    if mem.is_empty():
        return not_collected_figure(
            title, "memory records (torch_npu: profile_memory=True; msprof: --sys-hardware-mem=on)"
        )
    top = max(cast(float, v) for v in (mem["reserved_mb"].max(), mem["allocated_mb"].max(), 0) if v is not None)
    limit = {}
    if device_mb and top >= 0.5 * device_mb:
        line = {"color": COLORS["limit"], "dash": "dash", "width": 1.5}
        limit = {
            "shapes": [
                {"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "y0": device_mb, "y1": device_mb, "line": line}
            ]
        }
    return figure(
        memory_traces(mem),
        figure_layout(title, X_TITLE, "MB", height=360),
        {"shapes": step_shapes(steps), "xaxis": _range(x_range)},
        limit,
    )


def hbm_gap(hbm: pl.DataFrame) -> str:
    """Why an HBM series cannot be drawn over time ('' when it can).

    >>> hbm_gap(pl.DataFrame({"counter": ["hbm_read"], "offset_ms": [0.0], "mb_per_s": [0.0]}))
    'HBM bandwidth: every sample at one instant (0.000 ms): no series over time to draw'
    """
    if hbm.is_empty():
        return "not collected: HBM bandwidth (torch_npu: sys_hardware_mem_freq; msprof: --sys-hardware-mem=on)"
    if hbm["offset_ms"].n_unique() < 2:
        return f"HBM bandwidth: every sample at one instant ({hbm['offset_ms'][0]:.3f} ms): no series over time to draw"
    return ""


def core_gap(cores: pl.DataFrame, sampled: pl.DataFrame) -> str:
    """Why the cores' clock and utilisation cannot be drawn over time ('' when they can)."""
    if not cores.is_empty():
        return ""
    if sampled.is_empty():
        return (
            "not collected: AI Core frequency / utilisation over time (torch_npu: the timeline's AI Core Freq track; "
            "msprof: --aic-mode=sample-based, --sys-hardware-mem=on)"
        )
    means = ", ".join(
        f"{kind} {metric} {avg:.1%}"
        for kind, metric, avg in zip(*(sampled[c].to_list() for c in ("core_kind", "metric", "average")), strict=True)
        if avg is not None and metric in ("mac_ratio", "vec_ratio", "mte2_ratio")
    )
    return f"sample-based averages over the whole window only, no time series ({means})"


_TITLE = "Compute, bandwidth, memory and cores on one time axis"
_ROWS = ("Compute busy (%)", "HBM (GB/s)", "Memory (MB)", "AI Core clock (MHz) / utilisation (%)")


def _row_note(row: int, text: str) -> dict:
    return {
        "text": plotly_text(text),
        "showarrow": False,
        "xref": f"x{_suffix(row)} domain",
        "yref": f"y{_suffix(row)} domain",
        "x": 0.5,
        "y": 0.5,
        "font": {"size": 12, "color": COLORS["muted"]},
    }


def _axes(row: int) -> dict:
    return {"xaxis": f"x{_suffix(row)}", "yaxis": f"y{_suffix(row)}"}


def _suffix(row: int) -> str:
    return "" if row == 1 else str(row)


def _busy_traces(busy: pl.DataFrame, axes: dict) -> list[dict]:
    return [busy_trace(busy, "compute busy %", **axes)]


def _hbm_traces(hbm: pl.DataFrame, axes: dict) -> list[dict]:
    return hbm_traces(hbm, lambda mb_per_s: (mb_per_s / 1000).round(3).to_list(), "HBM ", **axes)


_CORE_SERIES = {"aicore_freq": "AI Core MHz", "aicore_utilization": "AI Core util %"}
_CORE_SERIES["aivector_utilization"] = "AI Vector util %"


def _core_traces(cores: pl.DataFrame, axes: dict) -> list[dict]:
    table = column_lists(cores, ("counter", "offset_ms", "value"))
    return [
        trace(
            "scatter",
            x=part["offset_ms"],
            y=part["value"],
            mode="lines+markers",
            line={"shape": "hv"},
            name=name,
            hovertemplate=f"%{{x:.3f}} ms: {name} %{{y:.1f}}<extra></extra>",
            **axes,
        )
        for counter, name in _CORE_SERIES.items()
        for part in [rows_equal(table, "counter", counter, ("offset_ms", "value"))]
        if part["offset_ms"]
    ]


def stacked_layout() -> dict:
    """Four panels one above the other, their x axes matched (plotly's shared_xaxes)."""
    return subplots_layout(rows=4, cols=1, shared_xaxes=True, vertical_spacing=0.07, subplot_titles=_ROWS)


def _panel_layout(notes: dict[int, str], steps: pl.DataFrame, x_range: tuple[float, float] | None) -> dict:
    """Every panel styled and on the shared x range; notes over the empty ones; step starts across all."""
    axes = {f"{a}axis{_suffix(r)}": dict(_STYLE) for r in range(1, 5) for a in "xy"}
    for r in range(1, 5):
        axes[f"xaxis{_suffix(r)}"].update(_range(x_range), showticklabels=True)
        if notes[r]:
            axes[f"yaxis{_suffix(r)}"].update(showticklabels=False, zeroline=False)
    axes["xaxis4"]["title"] = {"text": X_TITLE}
    return {
        **axes,
        "margin": {"l": 70},
        "annotations": [_row_note(r, n) for r, n in notes.items() if n],
        "shapes": [s for r in range(1, 5) for s in step_shapes(steps, f"y{_suffix(r)} domain", f"x{_suffix(r)}")],
    }


def timeline_chart(
    busy: pl.DataFrame,
    hbm: pl.DataFrame,
    mem: pl.DataFrame,
    cores: pl.DataFrame,
    steps: pl.DataFrame,
    x_range: tuple[float, float] | None,
    core_note: str = "",
) -> Figure:
    """Compute busy, HBM bandwidth, memory and the cores' clock / utilisation stacked on one shared
    x axis, step starts dotted across all of them; a panel without data says why."""
    if busy.is_empty() and hbm.is_empty() and mem.is_empty() and cores.is_empty():
        return not_collected_figure(_TITLE, "compute tasks, HBM bandwidth, memory records or core counters")
    notes = {
        1: "" if not busy.is_empty() else "no compute tasks in ops",
        2: hbm_gap(hbm),
        3: "" if not mem.is_empty() else "not collected: memory records (torch_npu: profile_memory=True)",
        4: core_note or ("" if not cores.is_empty() else "not collected: AI Core frequency / utilisation"),
    }
    build = {1: (_busy_traces, busy), 2: (_hbm_traces, hbm), 3: (memory_traces, mem), 4: (_core_traces, cores)}
    traces = [t for r, (make, data) in build.items() if not notes[r] for t in make(data, _axes(r))]
    # an empty trace keeps the axes of a panel without data, so its frame, time axis and note still show
    traces += [trace("scatter", x=[], y=[], showlegend=False, hoverinfo="skip", **_axes(r)) for r in notes if notes[r]]
    return figure(traces, stacked_layout(), figure_layout(_TITLE, height=860), _panel_layout(notes, steps, x_range))
