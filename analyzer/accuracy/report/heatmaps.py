"""Pure: an error_locations row -> a plotly figure (H x W heatmap beside the per-channel profile)."""

from __future__ import annotations

import numpy as np


def location_figure(location: dict):
    """The located tensor's mean |x - y| over H x W, and per channel."""
    from plotly.subplots import make_subplots  # heavy; only HTML needs it

    heat = np.asarray(location["heatmap"], dtype=float).reshape(location["map_rows"], location["map_cols"])
    channels = location["channel_error"] or []
    fig = make_subplots(rows=1, cols=2, column_widths=[0.55, 0.45], horizontal_spacing=0.12,
                        subplot_titles=("mean |error| over H x W", "mean |error| per channel"))  # fmt: skip
    fig.add_heatmap(z=heat, colorscale="Inferno", colorbar={"x": 0.5, "len": 0.9}, row=1, col=1)
    fig.add_bar(x=list(range(len(channels))), y=channels, marker_color="#c0392b", row=1, col=2, showlegend=False)
    fig.update_yaxes(autorange="reversed", title_text="H", row=1, col=1)
    fig.update_xaxes(title_text="W", row=1, col=1)
    fig.update_xaxes(title_text="channel", row=1, col=2)
    fig.update_layout(height=340, margin={"l": 50, "r": 20, "t": 40, "b": 40}, template="plotly_white")
    return fig
