"""A chart as plotly's own JSON (plain dicts), never turned into plotly graph objects: a page draws
hundreds of charts, and plotly validates every property of every graph object it builds.

The dicts are what plotly's ``to_plotly_json`` writes for the same figure (tests/test_plain_figure.py
checks that plotly's validation gives them back unchanged), so the pages look as they did.
"""

from __future__ import annotations

import json
from typing import Any

from analyzer.report.json_text import compact_json

# What plotly writes for the template named "none" (plotly.io.templates["none"]): plotly.js knows no
# template names, only their contents.
NO_TEMPLATE = {"data": {"scatter": [{"type": "scatter"}]}}


def trace(kind: str, **props: Any) -> dict:
    """One trace of type ``kind`` ('scatter', 'bar', ...) as plotly's JSON; a property set to None is
    left out, as plotly leaves out an unset one.

    >>> trace("bar", x=[1], name=None)
    {'type': 'bar', 'x': [1]}
    """
    return {"type": kind, **{k: v for k, v in props.items() if v is not None}}


def merged(base: dict, extra: dict) -> dict:
    """``base`` updated by ``extra`` as plotly's ``update_layout`` does: nested dicts merge, lists of
    shapes and annotations are appended to, anything else is replaced (neither input is changed).

    >>> merged({"xaxis": {"type": "log"}, "shapes": [1]}, {"xaxis": {"range": [0, 1]}, "shapes": [2]})
    {'xaxis': {'type': 'log', 'range': [0, 1]}, 'shapes': [1, 2]}
    """
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        elif key in ("shapes", "annotations") and key in out:
            out[key] = [*out[key], *value]
        else:
            out[key] = value
    return out


class Figure:
    """A chart: its traces and its layout as plotly's JSON."""

    __slots__ = ("data", "layout")

    def __init__(self, data: list[dict], layout: dict) -> None:
        self.data, self.layout = data, layout

    @property
    def title(self) -> str:
        """The title's text ('' without one)."""
        return str((self.layout.get("title") or {}).get("text") or "")

    def update_layout(self, extra: dict) -> Figure:
        """The layout merged with ``extra`` (as plotly's ``update_layout``); returns the figure."""
        self.layout = merged(self.layout, extra)
        return self

    def to_dict(self) -> dict:
        """The figure as plotly's JSON: {'data': [...], 'layout': {...}}."""
        return {"data": self.data, "layout": self.layout}


def _safe(text: str) -> str:
    """'<', '>' and '/' inside JSON strings as plotly writes them, so that no string can close the script tag
    (three replaces: str.translate with a table of strings goes character by character in Python's slow path)."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("/", "\\u002f")


def figure_json(value: Any) -> str:
    """``value`` (a figure's data, layout or config) as plotly.io writes it into a page: compact JSON, '<',
    '>' and '/' escaped, NaN and infinities as null, decimals and dates as plotly's encoder writes them.

    >>> print(figure_json({"text": "</script>", "y": [1.5, float("nan")]}))
    {"text":"\\u003c\\u002fscript\\u003e","y":[1.5,null]}
    """
    text = compact_json(value)  # orjson, when it writes what the lines below would
    if text is not None:
        return _safe(text)
    text = json.dumps(value, separators=(",", ":"), default=_plotly_default)
    if "NaN" in text or "Infinity" in text:  # maybe only inside a string: parsed back, only numbers change
        text = json.dumps(json.loads(text, parse_constant=lambda _: None), separators=(",", ":"))
    return _safe(text)


def _plotly_default(value: Any) -> Any:
    """What plotly's JSON encoder writes for a value json cannot (Decimal, date, numpy scalars)."""
    # plotly's own rules, for the rare value that needs them
    from _plotly_utils.utils import PlotlyJSONEncoder  # type: ignore[import-untyped]

    return PlotlyJSONEncoder().default(value)


def figure_div(fig: dict, div_id: str, config: str) -> str:
    """A figure (plotly's JSON: data and layout) as the HTML plotly.io.to_html(full_html=False) writes: a box
    as high as the layout says, and the script drawing the figure into it once plotly.js is loaded; ``config``:
    the plot's config as ``figure_json`` writes it (the same for every chart of a page, written once)."""
    layout = fig.get("layout") or {}
    height = f"{layout['height']}px" if isinstance(layout.get("height"), int | float) else "100%"
    width = f"{layout['width']}px" if isinstance(layout.get("width"), int | float) else "100%"
    plot = f'"{div_id}", {figure_json(fig.get("data") or [])}, {figure_json(layout)}, {config}'
    return (
        f'<div style="height:{height}; width:{width};"><div id="{div_id}" class="plotly-graph-div" '
        'style="height:100%; width:100%;"></div><script>window.PLOTLYENV=window.PLOTLYENV || {};'
        f'if (document.getElementById("{div_id}")) {{Plotly.newPlot({plot})}};</script></div>'
    )
