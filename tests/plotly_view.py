"""A chart of ours (plain_figure.Figure: plotly's JSON) as a plotly Figure: validated by plotly, which
refuses any property it does not know, and read with plotly's attribute access in the tests."""

from __future__ import annotations

import plotly.graph_objects as go

from analyzer.report.plain_figure import Figure


def validated(fig: Figure) -> go.Figure:
    return go.Figure(fig.to_dict())


def validated_all(figures: dict[str, Figure]) -> dict[str, go.Figure]:
    return {key: validated(fig) for key, fig in figures.items()}
