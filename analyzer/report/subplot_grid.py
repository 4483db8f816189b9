"""The layout plotly's ``make_subplots`` makes for a grid of panels (axis domains, anchors, shared axes and the
panels' titles), computed as plotly computes it, float for float, without plotly's figure classes, whose import and
validation every process drawing a page of panels would otherwise pay."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_TITLE_FONT = {"size": 16}


def grid_layout(
    *,
    rows: int,
    cols: int,
    subplot_titles: Sequence[str],
    shared_xaxes: bool = False,
    shared_yaxes: bool = False,
    vertical_spacing: float | None = None,
    horizontal_spacing: float | None = None,
) -> dict[str, Any]:
    """``make_subplots(rows=, cols=, ...).layout.to_plotly_json()`` of a figure without a template, for cells of
    xy panels laid out from the top left (plotly's defaults), each titled by ``subplot_titles`` in row order."""
    h_space = 0.2 / cols if horizontal_spacing is None else horizontal_spacing
    v_space = 0.5 / rows if vertical_spacing is None else vertical_spacing  # plotly's default with titles
    widths = [(1.0 - h_space * (cols - 1)) / cols] * cols
    heights = [(1.0 - v_space * (rows - 1)) / rows] * rows
    layout: dict[str, Any] = {}
    domains: list[tuple[list[float], list[float]]] = []
    for r in range(rows):  # row 0 at the top: its cell of plotly's grid is counted from the bottom
        below = rows - 1 - r
        y_s = sum(heights[:below]) + below * v_space + 0.0
        y_e = sum(heights[:below]) + below * v_space + heights[-1 - r] - 0.0
        for c in range(cols):
            left = sum(widths[:c]) + c * h_space
            x_domain, y_domain = [left + 0.0, left + widths[c] - 0.0], [min(max(y_s, 0.0), 1.0), min(y_e, 1.0)]
            n = len(domains) + 1
            suffix = str(n) if n > 1 else ""
            layout[f"xaxis{suffix}"] = {"anchor": f"y{suffix}", "domain": x_domain}
            layout[f"yaxis{suffix}"] = {"anchor": f"x{suffix}", "domain": y_domain}
            domains.append((x_domain, y_domain))
    if shared_xaxes:  # each column's axes match its bottom one, whose tick labels alone are shown
        for c in range(cols):
            first = _axis_id("x", (rows - 1) * cols + c + 1)
            for r in range(rows - 2, -1, -1):
                layout[f"xaxis{_suffix(r * cols + c + 1)}"].update(matches=first, showticklabels=False)
    if shared_yaxes:  # each row's axes match its leftmost one, whose tick labels alone are shown
        for r in range(rows):
            first = _axis_id("y", r * cols + 1)
            for c in range(1, cols):
                layout[f"yaxis{_suffix(r * cols + c + 1)}"].update(matches=first, showticklabels=False)
    layout["annotations"] = [
        {
            "font": dict(_TITLE_FONT),
            "showarrow": False,
            "text": title,
            "x": sum(x_domain) / 2.0,
            "xanchor": "center",
            "xref": "paper",
            "y": y_domain[1],
            "yanchor": "bottom",
            "yref": "paper",
        }
        for title, (x_domain, y_domain) in zip(subplot_titles, domains, strict=False)
        if title
    ]
    return layout


def _suffix(n: int) -> str:
    return str(n) if n > 1 else ""


def _axis_id(letter: str, n: int) -> str:
    return f"{letter}{_suffix(n)}"
