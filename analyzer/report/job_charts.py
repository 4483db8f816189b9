"""Pure chart builders of the job page: job table rows in, plotly Figures out (no IO), styled as the run charts."""

from __future__ import annotations

import math

from analyzer.report.charts import (
    COLORS,
    every_axis,
    figure,
    figure_layout,
    layout_axis,
    not_collected_figure,
    panel_axes,
    panels_layout,
    plotly_text,
)
from analyzer.report.plain_figure import Figure, trace

# The parts of a rank's step the heatmaps show: (column, label).
_PARTS = (
    ("computing_us", "computing"),
    ("comm_not_overlapped_us", "communication (not overlapped)"),
    ("free_us", "free"),
)
# The parts of a pipeline stage's step, as the stage chart groups them: (column, label, colour).
_STAGE_PARTS = (
    ("computing_us", "computing", COLORS["computing"]),
    ("comm_us", "communication", COLORS["comm"]),
    ("bubble_us", "bubble", COLORS["idle"]),
    ("free_us", "free", COLORS["free"]),
)


def rank_step_heatmap(rows: list[dict]) -> Figure:
    """Rank x step heatmaps of computing, not-overlapped communication and free time (ms)."""
    steps = sorted({r["step_id"] for r in rows}, key=lambda s: (s is None, s))
    ranks = sorted({r["rank"] for r in rows})
    at = {(r["rank"], r["step_id"]): r for r in rows}
    traces = []
    for i, (col, label) in enumerate(_PARTS, 1):
        z = [[(at.get((rank, s)) or {}).get(col) for s in steps] for rank in ranks]
        z = [[None if v is None else v / 1000 for v in line] for line in z]
        traces.append(
            trace(
                "heatmap",
                z=z,
                x=[plotly_text(s) for s in steps],
                y=ranks,
                coloraxis="coloraxis",
                texttemplate="%{z:.1f}" if len(ranks) * len(steps) <= 64 else None,
                name=label,
                hovertemplate="rank %{y}, step %{x}: %{z:.2f} ms<extra>" + plotly_text(label) + "</extra>",
                **panel_axes(i),
            )
        )
    return figure(
        traces,
        panels_layout([label for _, label in _PARTS], shared_y=True),
        figure_layout("Step time per rank and step (ms)", height=max(320, 12 * len(ranks) + 160)),
        # from 0 ms: a spread of a few percent between ranks reads as small, not as the whole colour range
        {
            "coloraxis": {"colorscale": colorscale("Viridis"), "cmin": 0, "cmax": _top_ms(traces)},
            "yaxis": {"title": {"text": "rank"}, "autorange": "reversed"},
        },
        # whole ranks only (two ranks got ticks at -0.5, 0.5 and 1.5), about 16 of them
        every_axis("y", len(_PARTS), {"tick0": 0, "dtick": max(1, math.ceil(len(ranks) / 16))}),
        # steps are ids, not a scale: one step drew ticks at 49.5, 50 and 50.5
        every_axis("x", len(_PARTS), {"type": "category", "title": {"text": "step"}}),
    )


def colorscale(name: str) -> list[list]:
    """A colour scale of plotly's by name, as the list of [position, colour] plotly writes for it (plotly.js
    knows only some of the names)."""
    from plotly.colors import get_colorscale  # the job page only

    colors = [color for _, color in get_colorscale(name)]
    return [[i / (len(colors) - 1), color] for i, color in enumerate(colors)]


def _top_ms(traces: list[dict]) -> float:
    """The largest value of the heatmaps (the colour scale's top; plotly needs it beside a set bottom)."""
    return max((v for t in traces for line in t["z"] for v in line if v is not None), default=1.0)


def wait_transit_bars(rows: list[dict]) -> Figure:
    """Per rank the collective wait and transit time per step (ms)."""
    ranks = [r["rank"] for r in rows]
    bars = [
        trace("bar", x=ranks, y=[(r[col] or 0) / 1000 for r in rows], name=label, marker={"color": color})
        for col, label, color in (("wait_us", "wait", COLORS["idle"]), ("transit_us", "transit", COLORS["comm"]))
    ]
    title = "Communication wait vs transit per rank (ms per step)"
    return figure(bars, figure_layout(title, "rank", "ms per step"), {"barmode": "group"})


def link_bandwidth_figure(rows: list[dict], present: set[int] | None = None, max_ranks: int = 64) -> Figure:
    """The communication matrix as a bandwidth heatmap per transport (GB/s) over the ranks ``present`` (those
    with an export; None: every rank in the rows), coloured from 0 GB/s so a few percent of spread reads as
    the small spread it is, each cell labelled; for more than ``max_ranks`` ranks, the 40 slowest links of
    each transport as bars instead."""
    if present is not None:
        rows = [r for r in rows if r["src_rank"] in present and r["dst_rank"] in present]
    transports = sorted({r["transport"] for r in rows})
    if not transports:
        return not_collected_figure("Link bandwidth", "no communication matrix between the job's ranks")
    ranks = sorted({r["src_rank"] for r in rows} | {r["dst_rank"] for r in rows})
    panels = panels_layout(transports)
    traces = [_link_trace(ranks, [r for r in rows if r["transport"] == t], t, panels, i, max_ranks)
              for i, t in enumerate(transports, 1)]  # fmt: skip
    title = "Link bandwidth by transport (GB/s; source rank down, destination across)"
    height = max(320, min(520, 40 * len(ranks) + 160))
    category = {"type": "category", "categoryorder": "array", "categoryarray": ranks}
    return figure(traces, panels, figure_layout(title, height=height), every_axis("x", len(transports), category),
                  every_axis("y", len(transports), {**category, "autorange": "reversed"}))  # fmt: skip


def _link_trace(ranks: list[int], mine: list[dict], transport: str, panels: dict, i: int, max_ranks: int):
    """One transport's heatmap (or, past ``max_ranks`` ranks, its slowest links as bars)."""
    if len(ranks) > max_ranks:
        slow = sorted(mine, key=lambda r: (r["gb_per_s"], r["src_rank"], r["dst_rank"]))[:40]
        links = [f"{r['src_rank']}->{r['dst_rank']}" for r in slow]
        return trace("bar", x=links, y=[r["gb_per_s"] for r in slow], name=transport, **panel_axes(i))
    at = {(r["src_rank"], r["dst_rank"]): r["gb_per_s"] for r in mine}
    z = [[at.get((s, d)) for d in ranks] for s in ranks]
    return trace(
        "heatmap",
        z=z,
        x=ranks,
        y=ranks,
        zmin=0,
        zmax=max((v for line in z for v in line if v is not None), default=1.0),
        colorscale=colorscale("RdYlGn"),
        colorbar=_beside_panel(panels, i),
        texttemplate="%{z:.1f}" if len(ranks) <= 16 else None,
        name=transport,
        hovertemplate="rank %{y} -> rank %{x}: %{z:.2f} GB/s<extra>" + transport + "</extra>",
        **panel_axes(i),
    )


def _beside_panel(panels: dict, panel: int) -> dict:
    """A colour bar just right of panel ``panel`` of ``panels_layout``: each transport has its own scale,
    and plotly would draw every bar at the right edge of the figure, one over the other."""
    end = panels[layout_axis("x", panel)]["domain"][1]
    return {"x": end + 0.01, "xanchor": "left", "thickness": 12}


def stage_bars(rows: list[dict]) -> Figure:
    """Per pipeline stage the mean computing, communication, bubble and free time per step (ms)."""
    stages = [f"stage {r['pp_stage']}" for r in rows]
    bars = [
        trace("bar", x=stages, y=[(r[col] or 0) / 1000 for r in rows], name=label, marker={"color": color})
        for col, label, color in _STAGE_PARTS
    ]
    title = "Pipeline stages: mean time per step (ms)"
    return figure(bars, figure_layout(title, "", "ms per step"), {"barmode": "group"})
