"""A chart as plotly's own JSON (plain dicts), never turned into plotly graph objects: a page draws
hundreds of charts, and plotly validates every property of every graph object it builds.

The dicts are what plotly's ``to_plotly_json`` writes for the same figure (tests/test_plain_figure.py
checks that plotly's validation gives them back unchanged), so the pages look as they did.
"""

from __future__ import annotations

from typing import Any

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
