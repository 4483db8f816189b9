"""Pure chart builders: a series table in, a plotly Figure out (no IO, no show). Reused by multi-run reports."""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

import numpy as np
import polars as pl

from analyzer.report.escaped_text import escaped
from analyzer.report.plain_figure import NO_TEMPLATE, Figure, merged, trace
from analyzer.report.subplot_grid import grid_layout
from analyzer.rule_engine.compute_task_types import COMPUTE_TASK_TYPES

# One palette and one layout for every chart of every report, so pages look alike.
COLORS = {
    "busy": "#2f6db5",
    "idle": "#f2b134",
    "limit": "#c0392b",
    "bar": "#4a7fc1",
    "line": "#e07b39",
    "cube": "#3a7d44",
    "vector": "#4a7fc1",
    "scalar": "#9b59b6",
    "mte": "#e07b39",
    "computing": "#3a7d44",
    "comm": "#c0392b",
    "free": "#b0b7c3",
    "other": "#9b59b6",
    "long_gaps": "#f2b134",
    "launch_gaps": "#e07b39",
    "muted": "#9aa4b2",
    "hot": "#c0392b",
    "read": "#2f6db5",
    "write": "#e07b39",
}
_AXIS = {
    "automargin": True,
    "gridcolor": "#e9edf3",
    "linecolor": "#c5ccd6",
    "zerolinecolor": "#c5ccd6",
    "ticks": "outside",
    "tickcolor": "#c5ccd6",
    "showline": True,
}
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"


def _limit_line(y: float, text: str) -> dict:
    """The dashed horizontal line of a rule's limit, labelled at its left end: layout ``shapes`` and
    ``annotations`` (what plotly's ``add_hline`` writes, without its per-call cost).

    >>> sorted(_limit_line(30.0, "30%"))
    ['annotations', 'shapes']
    """
    return {
        "shapes": [
            {
                "type": "line",
                "xref": "x domain",
                "x0": 0,
                "x1": 1,
                "yref": "y",
                "y0": y,
                "y1": y,
                "line": {"color": COLORS["limit"], "dash": "dash", "width": 1.5},
            }
        ],
        "annotations": [
            {
                "text": text,
                "showarrow": False,
                "xref": "x domain",
                "x": 0,
                "xanchor": "left",
                "yref": "y",
                "y": y,
                "yanchor": "bottom",
            }
        ],
    }


def figure(traces: list[dict], layout: dict, *more: dict) -> Figure:
    """A chart: ``traces`` and ``layout`` deep-merged with ``more`` (later wins, lists of shapes and
    annotations add up), as plotly's JSON (plain_figure.py).

    >>> figure([], figure_layout("t"), {"xaxis": {"type": "log"}}).layout["xaxis"]["type"]
    'log'
    """
    for extra in more:
        layout = merged(layout, extra)
    # plotly writes no empty list of shapes or annotations
    return Figure(traces, {k: v for k, v in layout.items() if v != [] or k not in ("shapes", "annotations")})


def panels_layout(titles: list[str], shared_y: bool = False) -> dict:
    """The layout of one row of panels titled ``titles`` (axis domains and anchors, the panels' titles),
    as plotly's ``make_subplots`` lays them out, for ``figure``. Panel i's traces name their axes
    ``panel_axes(i)``.

    >>> sorted(panels_layout(["a", "b"]))
    ['annotations', 'xaxis', 'xaxis2', 'yaxis', 'yaxis2']
    """
    return subplots_layout(rows=1, cols=len(titles), subplot_titles=tuple(titles), shared_yaxes=shared_y)


def subplots_layout(**grid: Any) -> dict:
    """The layout plotly's ``make_subplots(**grid)`` makes (axis domains and anchors, the panels'
    titles), without its template: figure_layout names the template. Computed once per grid, without
    plotly (subplot_grid.py)."""
    return _json_copy(_subplots_layout(tuple(sorted(grid.items()))))


def _json_copy(value: Any) -> Any:
    """A deep copy of a JSON-like value (dicts, lists, tuples and scalars): what copy.deepcopy makes of a layout,
    several times faster, without deepcopy's memo of every object.

    >>> layout = {"a": [{"b": 1}], "t": (1, 2)}
    >>> copied = _json_copy(layout)
    >>> copied == layout and copied["a"][0] is not layout["a"][0]
    True
    """
    if isinstance(value, dict):
        return {k: _json_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_copy(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_json_copy(v) for v in value)
    return value


@functools.cache
def _subplots_layout(grid: tuple) -> dict:
    return grid_layout(**dict(grid))


def panel_axes(panel: int) -> dict:
    """The axes of panel ``panel`` (1..) of ``panels_layout``, as trace properties.

    >>> panel_axes(1), panel_axes(3)
    ({'xaxis': 'x', 'yaxis': 'y'}, {'xaxis': 'x3', 'yaxis': 'y3'})
    """
    suffix = _panel_suffix(panel)
    return {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}


def layout_axis(letter: str, panel: int) -> str:
    """The layout key of the ``letter`` ('x' or 'y') axis of panel ``panel`` (1..) of ``panels_layout``.

    >>> layout_axis("x", 1), layout_axis("y", 2)
    ('xaxis', 'yaxis2')
    """
    return f"{letter}axis{_panel_suffix(panel)}"


def _panel_suffix(panel: int) -> str:
    return "" if panel == 1 else str(panel)


def every_axis(letter: str, panels: int, settings: dict) -> dict:
    """``settings`` for the ``letter`` ('x' or 'y') axis of every one of ``panels`` panels, as a layout update.

    >>> every_axis("x", 2, {"type": "log"})
    {'xaxis': {'type': 'log'}, 'xaxis2': {'type': 'log'}}
    """
    return {layout_axis(letter, i): settings for i in range(1, panels + 1)}


def figure_layout(title: str, x_title: str = "", y_title: str = "", height: int = 340) -> dict:
    """Layout settings shared by every chart: pass to ``figure`` (or ``fig.update_layout(**figure_layout(...))``).

    >>> figure_layout("Busy", "time (ms)", "%")["xaxis"]["title"]["text"]
    'time (ms)'
    """
    return {
        "title": {
            "text": plotly_text(title),
            "x": 0.01,
            "xanchor": "left",
            "y": 1,
            "yref": "container",
            "yanchor": "top",
            "pad": {"t": 10},
            "font": {"size": 15},
        },
        "template": NO_TEMPLATE,  # styled here instead: smaller figures
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "height": height,
        "margin": {"l": 60, "r": 20, "t": 78, "b": 50},
        "font": {"family": FONT, "size": 12, "color": "#1f2933"},
        "xaxis": {"title": {"text": x_title}, **_AXIS},
        "yaxis": {"title": {"text": y_title}, **_AXIS},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0.0},
        "hoverlabel": {"font": {"family": FONT}},
    }


# What plotly_text changes in a text.
_PLOTLY_ESCAPED = re.compile("[<>&]")


def plotly_text(value: object) -> str:
    """Text for plotly labels: plotly reads a few HTML tags in strings, so '<', '>' and '&' are escaped.

    >>> plotly_text("<b>x</b>")
    '&lt;b&gt;x&lt;/b&gt;'
    """
    return escaped("plotly", "" if value is None else str(value))


def _scaled(values: pl.Series, factor: float, digits: int = 4) -> list[float | None]:
    """Values times ``factor``, rounded to ``digits`` decimals: a chart shows no more, and the page stays small.

    The numbers polars' ``(values * factor).round(digits)`` gives (scaled by the power of ten, rounded half to
    even, scaled back), computed by numpy: a polars expression is planned and run for each call, which costs
    more than the few thousand values of a chart. A value whose scaling overflows is left unrounded, as polars
    leaves it.

    >>> _scaled(pl.Series([1234.5678, None, 0.00125]), 1e-3)
    [1.2346, None, 0.0]
    """
    if values.len() <= _FEW_VALUES:
        return scaled_few(values.cast(pl.Float64).to_list(), factor, 10.0**digits)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is found below, as polars finds it
        scaled = values.cast(pl.Float64).to_numpy() * factor
        rounded = np.round(scaled, digits)
    overflowed = ~np.isfinite(rounded) & np.isfinite(scaled)
    if overflowed.any():
        rounded = np.where(overflowed, scaled, rounded)
    out = rounded.tolist()
    if values.null_count():  # a null is NaN in numpy: put each back as None
        return [None if v is None else r for v, r in zip(values.to_list(), out, strict=True)]
    return out


# Up to this many values, _scaled's numbers are made one by one: numpy's fixed cost per call is more than theirs.
_FEW_VALUES = 32


def scaled_few(values: Sequence[float | None], factor: float, power: float) -> list[float | None]:
    """``_scaled``'s numbers of a few values (a diff's waterfall too) made as numpy makes them (``power``: ten to
    the digits): scaled, times the power, rounded half to even (``rint``, a zero keeping its sign), divided by it;
    a value whose product overflows left scaled, a null None.

    >>> scaled_few([2.5e-4, -1e-5, None, 1e308, float("inf")], 1.0, 1e4)
    [0.0002, -0.0, None, 1e+308, inf]
    """
    out: list[float | None] = []
    for v in values:
        if v is None:
            out.append(None)
            continue
        scaled = v * factor
        product = scaled * power
        if not math.isfinite(product):  # numpy's rint keeps it; a finite value then stays as scaled
            out.append(scaled)
            continue
        rounded = round(product) / power
        out.append(rounded if rounded else math.copysign(0.0, product))
    return out


def rows_where(table: dict[str, list], keep: list[bool], columns: Iterable[str] | None = None) -> dict[str, list]:
    """The values of ``columns`` (all by default) of ``table`` (columns as lists: ``column_lists``) in the rows
    where ``keep`` (one flag per row, made by a Python pass over a column) is true, in their order, as lists: a
    chart draws lists, and a polars gather or filter per part of a chart costs more than picking a few thousand
    values.

    >>> rows_where({"x": [1, None, 3], "y": list("abc")}, [False, True, True])
    {'x': [None, 3], 'y': ['b', 'c']}
    """
    if any(len(table[c]) != len(keep) for c in (columns or table)):
        raise ValueError("rows_where: a column and its flags differ in length")
    return {c: list(itertools.compress(table[c], keep)) for c in (columns or table)}


def rows_equal(
    table: dict[str, list], column: str, value: object, columns: Iterable[str] | None = None
) -> dict[str, list]:
    """``rows_where`` the ``column`` is ``value``."""
    return rows_where(table, [v == value for v in table[column]], columns)


def column_lists(frame: pl.DataFrame, columns: Iterable[str] | None = None) -> dict[str, list]:
    """The frame's ``columns`` (all by default) as lists, converted once for all the parts a chart picks from them
    (``rows_where``, ``rows_equal``)."""
    return {c: frame[c].to_list() for c in (frame.columns if columns is None else columns)}


def _labels(values: pl.Series | list) -> list[str]:
    """Each value as plotly text; each distinct one escaped once (a few op names label thousands of marks), none
    when the texts hold nothing plotly_text escapes (most operator names)."""
    raw = values if isinstance(values, list) else values.to_list()
    distinct = set(raw)
    if all(type(v) is str for v in distinct) and not _PLOTLY_ESCAPED.search("".join(distinct)):
        return list(raw)
    text = {v: plotly_text(v) for v in distinct}
    return [text[v] for v in raw]


TICK_CHARS = 18


def short_ticks(values: list, limit: int = TICK_CHARS) -> dict:
    """A category axis's tick texts cut to ``limit`` characters (the bars keep their whole names, shown on hover),
    so slanted names do not run into the axis title; cut before escaping, so no entity is split.

    >>> short_ticks(["MatMul", "<script>alert(1)</script>"], 10)["ticktext"]
    ['MatMul', '&lt;script&gt;a…']
    """
    raw = ["" if v is None else str(v) for v in values]
    cut = [v if len(v) <= limit else f"{v[: limit - 1]}…" for v in raw]
    return {"tickvals": [plotly_text(v) for v in raw], "ticktext": [plotly_text(v) for v in cut]}


def not_collected_figure(title: str, what: str) -> Figure:
    """An empty chart that says its data was not collected (instead of failing or vanishing)."""
    return note_figure(title, f"not collected: {what}")


def note_figure(title: str, text: str) -> Figure:
    """An empty chart that says, in ``text``, why it draws nothing."""
    note = {
        "text": plotly_text(text),
        "showarrow": False,
        "x": 0.5,
        "y": 0.5,
        "xref": "paper",
        "yref": "paper",
        "font": {"size": 13, "color": COLORS["muted"]},
    }
    hidden = {"visible": False}
    return figure([], figure_layout(title, height=200), {"xaxis": hidden, "yaxis": hidden, "annotations": [note]})


def _not_collected_when_empty(title: str, what: str) -> Callable[[Callable[..., Figure]], Callable[..., Figure]]:
    """A chart builder drawn from a series table: from an empty one, the ``not_collected_figure``
    saying ``what``; else the builder's figure, given the chart's ``title`` as a keyword."""

    def wrap(build: Callable[..., Figure]) -> Callable[..., Figure]:
        @functools.wraps(build)
        def chart(table: pl.DataFrame, *args: Any, **kwargs: Any) -> Figure:
            if table.is_empty():
                return not_collected_figure(title, what)
            return build(table, *args, title=title, **kwargs)

        return chart

    return wrap


def busy_trace(busy: pl.DataFrame, name: str, **axes: str) -> dict:
    """The compute busy percentage over time as a step line filled down to zero (``axes``: its panel's)."""
    return trace(
        "scatter",
        x=busy["offset_ms"].to_list(),
        y=busy["busy_pct"].to_list(),
        mode="lines",
        fill="tozeroy",
        name=name,
        line={"color": COLORS["busy"], "width": 1, "shape": "hv"},
        hovertemplate="%{x:.3f} ms: %{y:.1f}% busy<extra></extra>",
        **axes,
    )


@_not_collected_when_empty(
    "Compute busy over time", f"no compute tasks ({' / '.join(COMPUTE_TASK_TYPES)} or untyped) in ops"
)
def busy_chart(busy: pl.DataFrame, idle: pl.DataFrame, low_pct: float = 30.0, *, title: str) -> Figure:
    """Compute busy percentage over time, with the ``low_pct`` line and the idle stretches shaded."""
    traces = [busy_trace(busy, "busy %")]
    # Every shape in the layout at once: add_vrect per stretch is quadratic in plotly.
    idle_shapes = {
        "shapes": [
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": start,
                "x1": end,
                "y0": 0,
                "y1": 1,
                "layer": "below",
                "fillcolor": COLORS["idle"],
                "opacity": 0.25,
                "line": {"width": 0},
            }
            for start, end in zip(idle["start_ms"].to_list(), idle["end_ms"].to_list(), strict=True)
        ]
    }
    if not idle.is_empty():
        traces.append(
            trace(
                "scatter",
                x=[None],
                y=[None],
                mode="markers",
                name="idle stretch",
                marker={"symbol": "square", "size": 12, "color": COLORS["idle"], "opacity": 0.5},
            )
        )
    return figure(
        traces,
        idle_shapes,
        _limit_line(low_pct, f"{low_pct:.0f}%"),
        figure_layout(title, "time from first task (ms)", "busy (%)"),
        {"yaxis": {"range": [0, 105]}},
    )


@_not_collected_when_empty("Device time by operator type (compute tasks)", "no compute tasks in ops")
def pareto_chart(pareto: pl.DataFrame, *, title: str) -> Figure:
    """Operator types by summed compute-task time (bars, with calls) and cumulative share (line)."""
    labels = _labels(pareto["op_type"])
    calls = pareto["call_count"].to_list()
    bars = trace(
        "bar",
        x=labels,
        y=_scaled(pareto["total_us"], 1e-3),
        name="total time (ms), labelled with calls",
        marker={"color": COLORS["bar"]},
        text=[f"{c:,}" for c in calls],
        textposition="outside",
        cliponaxis=False,
        customdata=list(zip(calls, pareto["avg_us"].to_list(), strict=True)),
        hovertemplate="%{x}<br>%{y:.3f} ms in %{customdata[0]:,} calls, %{customdata[1]:.2f} us avg<extra></extra>",
    )
    cumulative = trace(
        "scatter",
        x=labels,
        y=_scaled(pareto["cumulative_share"], 100),
        yaxis="y2",
        mode="lines+markers",
        name="cumulative %",
        line={"color": COLORS["line"]},
        hovertemplate="%{x}: %{y:.1f}% cumulative<extra></extra>",
    )
    right_axis = {
        "overlaying": "y",
        "side": "right",
        "range": [0, 105],
        "title": {"text": "cumulative %"},
        "showgrid": False,
        "tickvals": [0, 25, 50, 75, 100],
    }
    return figure(
        [bars, cumulative],
        figure_layout(title, "", "total time (ms)", height=380),
        {
            "yaxis2": right_axis,
            "margin": {"r": 70},
            "xaxis": {"tickangle": -35, **short_ticks(pareto["op_type"].to_list())},
        },
    )


_PIPES = ("mte", "cube", "vector", "scalar")


@_not_collected_when_empty(
    "Pipe shares of core time, top op types", "PMU pipeline metrics (aic-metrics PipeUtilization)"
)
def pipeline_chart(pipeline: pl.DataFrame, mte_limit: float = 0.40, *, title: str) -> Figure:
    """Each pipe's share of core time per top operator type, side by side against the MTE line: pipes run at
    the same time, so their shares are not parts of one whole and are not stacked (they may add up past 100%)."""
    labels = _labels(pipeline["op_type"])
    shares = pipeline.select(pl.max_horizontal(*(f"{p}_share" for p in _PIPES))).to_series()
    top = max(cast(float, shares.max()) or 0.0, 1.0)  # polars types max() as any Python value
    bars = [
        trace(
            "bar",
            x=labels,
            y=_scaled(pipeline[f"{pipe}_share"], 100),
            name=pipe.upper() if pipe == "mte" else pipe,
            marker={"color": COLORS[pipe]},
            hovertemplate=f"%{{x}}<br>{pipe}: %{{y:.1f}}% of core time<extra></extra>",
        )
        for pipe in _PIPES
    ]
    return figure(
        bars,
        _limit_line(mte_limit * 100, f"MTE {mte_limit:.0%}"),
        figure_layout(title, "", "% of core time (pipes overlap)", height=380),
        {"barmode": "group", "bargap": 0.25, "xaxis": {"tickangle": -35, **short_ticks(pipeline["op_type"].to_list())}},
        {"yaxis": {"range": [0, 105 * top]}},
    )


@_not_collected_when_empty("Gaps between device tasks", "no gaps: the device never idled between tasks")
def gap_histogram_chart(hist: pl.DataFrame, threshold_us: float = 100.0, *, title: str) -> Figure:
    """Inter-op gaps in log-spaced bins; bins at or above ``threshold_us`` highlighted."""
    lows, highs = hist["low_us"].to_list(), hist["high_us"].to_list()
    labels = [f"{_us(lo)}-{_us(hi)}" for lo, hi in zip(lows, highs, strict=True)]
    colors = [COLORS["hot"] if lo >= threshold_us else COLORS["muted"] for lo in lows]
    bars = trace(
        "bar",
        x=labels,
        y=hist["gap_count"].to_list(),
        marker={"color": colors},
        name="gaps",
        customdata=_scaled(hist["total_gap_us"], 1e-3),
        hovertemplate="%{x}: %{y:,} gaps, %{customdata:.3f} ms in all<extra></extra>",
    )
    return figure(
        [bars],
        figure_layout(f"{title} (red: >= {_us(threshold_us)})", "gap length", "gaps"),
        {"yaxis": {"type": "log", "dtick": 1}},
    )


def _log_marks_trace(marks: pl.DataFrame, y: float) -> dict:
    """The CANN log records placed on the timeline (diagnose --logs), as marks along the top at ``y``."""
    return trace(
        "scatter",
        x=marks["offset_ms"].to_list(),
        y=[y] * marks.height,
        mode="markers",
        name="log record",
        marker={"color": COLORS["muted"], "symbol": "triangle-down", "size": 9},
        customdata=list(zip(_labels(marks["activity"]), _labels(marks["name"]), strict=True)),
        hovertemplate="%{x:.3f} ms: log, %{customdata[0]}<br>%{customdata[1]}<extra></extra>",
    )


@_not_collected_when_empty("Longest gaps on the timeline", "no gaps: the device never idled between tasks")
def gap_positions_chart(
    positions: pl.DataFrame, threshold_us: float = 100.0, marks: pl.DataFrame | None = None, *, title: str
) -> Figure:
    """Where the longest gaps fall on the timeline; those at or above ``threshold_us`` highlighted; the
    CANN log records placed on the timeline (``marks``, diagnose --logs) along the top when there are any."""
    traces = []
    columns = column_lists(positions)  # once for both groups
    gaps = columns["gap_us"]  # a missing gap is in neither group
    for long_gaps, name, color in (
        (False, "gap", COLORS["muted"]),
        (True, f">= {_us(threshold_us)}", COLORS["hot"]),
    ):
        part = rows_where(columns, [g is not None and (g >= threshold_us) == long_gaps for g in gaps])
        traces.append(
            trace(
                "scatter",
                x=part["offset_ms"],
                y=part["gap_us"],
                mode="markers",
                name=name,
                marker={"color": color, "size": 6 if long_gaps else 4},
                customdata=list(zip(_labels(part["before_op"]), _labels(part["after_op"]), strict=True)),
                hovertemplate=(
                    "%{x:.3f} ms: %{y:.1f} us<br>after %{customdata[0]}<br>before %{customdata[1]}<extra></extra>"
                ),
            )
        )
    if marks is not None and marks.height:
        top = max(cast(float, positions["gap_us"].max()) or 1.0, threshold_us) * 1.5
        traces.append(_log_marks_trace(marks, top))
    return figure(
        traces, figure_layout(title, "time from first task (ms)", "gap (us)"), {"yaxis": {"type": "log", "dtick": 1}}
    )


@_not_collected_when_empty("Calls vs time per call, by op type (compute tasks)", "no compute tasks in ops")
def calls_chart(calls: pl.DataFrame, marked_by: str = "", label_top: int = 5, *, title: str) -> Figure:
    """Call count against average time per compute-task operator type; the types marked as hotspots
    (the findings of the rules named in ``marked_by``) highlighted. The ``label_top`` types of each group
    with the most device time are named on the chart, so it reads without hovering."""
    traces = []
    table = column_lists(calls, ("hotspot", "op_type", "call_count", "avg_us", "total_us"))
    table["total_ms"] = _scaled(calls["total_us"], 1e-3)  # rounded per value: the whole column at once
    for hot, name, color in (
        (False, "operator type", COLORS["muted"]),
        (True, f"hotspot ({plotly_text(marked_by)} finding)" if marked_by else "hotspot", COLORS["hot"]),
    ):
        part = rows_equal(table, "hotspot", hot)
        labels = _labels(part["op_type"])
        total = part["total_us"]  # most time first (a missing total first, as polars sorts it), then in order
        named = set(sorted(range(len(total)), key=lambda i: (total[i] is not None, -(total[i] or 0), i))[:label_top])
        traces.append(
            trace(
                "scatter",
                x=part["call_count"],
                y=part["avg_us"],
                name=name,
                mode="markers+text",
                textposition="top center",
                textfont={"size": 10, "color": COLORS["hot"] if hot else COLORS["muted"]},
                text=[lab if i in named else "" for i, lab in enumerate(labels)],
                marker={"color": color, "size": 9 if hot else 6},
                customdata=list(zip(labels, part["total_ms"], strict=True)),
                hovertemplate="%{customdata[0]}<br>%{x:,} calls x %{y:.2f} us = %{customdata[1]:.3f} ms<extra></extra>",
            )
        )
    log = {"type": "log", "dtick": 1}
    return figure(traces, figure_layout(title, "calls", "average time per call (us)"), {"xaxis": log, "yaxis": log})


@_not_collected_when_empty("Step breakdown", "step boundaries (a profiler schedule with prof.step())")
def step_chart(steps: pl.DataFrame, *, title: str) -> Figure:
    """Per step: the parts of the time breakdown, stacked (they add up to the step)."""
    x = [plotly_text(s) for s in steps["label"].to_list()]
    bars = [
        trace(
            "bar",
            x=x,
            y=_scaled(steps[column], 1e-3),
            name=name,
            marker={"color": color},
            hovertemplate=f"step %{{x}}: {name} %{{y:.3f}} ms<extra></extra>",
        )
        for column, name, color in (
            ("computing_us", "computing", COLORS["computing"]),
            ("comm_not_overlapped_us", "communication not overlapped", COLORS["comm"]),
            ("other_tasks_us", "other device tasks", COLORS["other"]),
            ("gaps_us", "gaps (cause shown, or long)", COLORS["long_gaps"]),
            ("launch_gaps_us", "launch gaps", COLORS["launch_gaps"]),
            ("free_us", "free (before / after the tasks)", COLORS["free"]),
        )
    ]
    # six parts: above the plot their legend wraps over the title when the chart sits beside a finding
    below = {"legend": {"orientation": "h", "x": 0, "y": -0.22, "yanchor": "top"}, "margin": {"t": 40, "b": 130}}
    return figure(
        bars,
        figure_layout(title, "step", "time (ms)", height=400),
        {"barmode": "stack", **below, "xaxis": {"type": "category"}},
    )


@_not_collected_when_empty("HBM bandwidth", "HBM bandwidth (sys-hardware-mem)")
def hbm_chart(hbm: pl.DataFrame, *, title: str) -> Figure:
    """HBM read and write bandwidth over time (GB/s); samples all at one instant make no series: said so."""
    if hbm["offset_ms"].n_unique() < 2:
        return note_figure(
            title,
            f"every sample at one instant ({hbm['offset_ms'][0]:.3f} ms): no series over time to draw",
        )
    traces = hbm_traces(hbm, lambda mb_per_s: _scaled(mb_per_s, 1e-3))
    return figure(traces, figure_layout(title, "time from first task (ms)", "GB/s"))


def hbm_traces(hbm: pl.DataFrame, gb_per_s: Callable[[pl.Series], list], prefix: str = "", **axes: str) -> list[dict]:
    """The HBM read and write bandwidth lines (``gb_per_s``: the GB/s drawn from a counter's MB/s), named
    ``prefix`` + 'read' / 'write' (``axes``: their panel's)."""
    table = column_lists(hbm, ("counter", "offset_ms"))
    table["gb_per_s"] = gb_per_s(hbm["mb_per_s"])  # per value: the whole column at once
    return [
        trace(
            "scatter",
            x=part["offset_ms"],
            y=part["gb_per_s"],
            mode="lines",
            name=f"{prefix}{name}",
            line={"color": COLORS[name], "width": 1.5},
            hovertemplate=f"%{{x:.3f}} ms: {prefix}{name} %{{y:.2f}} GB/s<extra></extra>",
            **axes,
        )
        for counter, name in (("hbm_read", "read"), ("hbm_write", "write"))
        for part in [rows_equal(table, "counter", counter)]
    ]


def _us(value: float) -> str:
    """A duration in us, short: '0.56 us', '18 us', '1.8 ms'.

    >>> [_us(0.5623), _us(17.78), _us(1778.3)]
    ['0.56 us', '18 us', '1.8 ms']
    """
    if value >= 1000:
        return f"{value / 1000:.2g} ms" if value < 10000 else f"{value / 1000:.0f} ms"
    return f"{value:.2g} us" if value < 10 else f"{value:.0f} us"
