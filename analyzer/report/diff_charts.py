"""Pure chart builders of a run diff (no IO): the waterfall of per-op-type deltas from base to new step time.

They use the shared palette and layout of ``charts.py`` so a diff page looks like a run report.
"""

from __future__ import annotations

from analyzer.diff.model import RunDiff
from analyzer.report.charts import COLORS, figure, figure_layout, plotly_text, scaled_few
from analyzer.report.plain_figure import Figure, trace

WATERFALL_TYPES = 12


def waterfall_rows(diff: RunDiff) -> list[tuple[str, float]]:
    """(label, delta in us) bars: the largest per-type changes, the rest, and what no op type explains."""
    types = sorted(diff.types, key=lambda t: (-abs(t.delta_us), t.op_type))
    shown, rest = types[:WATERFALL_TYPES], types[WATERFALL_TYPES:]
    rows = [(t.op_type, t.delta_us) for t in shown]
    if rest:
        rows.append((f"{len(rest)} other types", sum(t.delta_us for t in rest)))
    unexplained = (diff.step.new_median - diff.step.base_median) - sum(t.delta_us for t in types)
    rows.append(("gaps / not in ops", unexplained))
    return rows


def diff_waterfall_chart(diff: RunDiff) -> Figure:
    """Base step time, then one bar per op-type delta, then the new step time (median per step, ms)."""
    rows = waterfall_rows(diff)
    x = ["base"] + [plotly_text(label) for label, _ in rows] + ["new"]
    # ms to the nanosecond, in a fixed format: the sums behind them end in digits that change with the order
    # DuckDB adds them in (its threads), which the page would otherwise carry
    us = [diff.step.base_median] + [d for _, d in rows] + [diff.step.new_median]
    y = scaled_few(us, 1e-3, 1e6)
    measure = ["absolute"] + ["relative"] * len(rows) + ["total"]
    waterfall = trace(
        "waterfall",
        x=x,
        y=y,
        measure=measure,
        connector={"line": {"color": COLORS["muted"], "width": 1}},
        increasing={"marker": {"color": COLORS["hot"]}},
        decreasing={"marker": {"color": COLORS["computing"]}},
        totals={"marker": {"color": COLORS["bar"]}},
        hovertemplate="%{x}: %{y:.4f} ms<extra></extra>",
    )
    basis = "step" if diff.step_basis == "steps" else "run span"
    title = f"Where the {basis} time went: base -> new (median per {basis})"
    return figure([waterfall], figure_layout(title, "", "time (ms)", height=420), {"showlegend": False})
