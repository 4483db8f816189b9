"""Where each chart of a run page goes, so that every chart is drawn exactly once.

A finding shows the chart its rule declares ([report] chart). The first finding to need a chart
draws it; later findings (and every info finding) link to it. A per-step finding ([report] zoom =
"step") gets a time chart (busy, hbm, gap positions) zoomed to its step's window, a chart of its
own; charts by category (the step breakdown shows every step side by side) are not zoomed.
The general charts section draws the charts no finding drew.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from analyzer.diagnosis_model import Diagnosis
from analyzer.report import charts, series
from analyzer.report.chart_marks import ChartMarks, finding_step
from analyzer.report.html_sections import esc
from analyzer.report.plain_figure import Figure
from analyzer.rule_engine.model import Finding

if TYPE_CHECKING:  # DuckDB is the main process's: a report worker draws pages from the series read for it
    import duckdb

TIME_AXIS_CHARTS = ("hbm", "gap_positions", "memory", "timeline")  # zoomed by their x range only
WIDE_CHARTS = ("timeline",)  # as wide as the page: its panels stack on one time axis


def chart_div_id(key: str, step: int | None = None) -> str:
    """The fixed div id of a chart (zoomed: with its step).

    >>> chart_div_id("gap_positions"), chart_div_id("busy", 50)
    ('chart-gap-positions', 'chart-busy-step-50')
    """
    base = f"chart-{key.replace('_', '-')}"
    return base if step is None else f"{base}-step-{step}"


def chart_title(fig: Figure) -> str:
    """The figure's title as HTML text (plotly_text already escaped it)."""
    return fig.title or "chart"


def chart_link(div_id: str, title: str, where: str) -> str:
    """A paragraph linking to a chart drawn elsewhere on the page (``title``: HTML text)."""
    return f'<p class="chart-ref">Chart: <a href="#{div_id}">{title}</a> ({where})</p>'


class ChartPlacement:
    """Hands each finding its chart or a link to it, then the section of the charts left."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        diagnosis: Diagnosis,
        figures: dict[str, Figure],
        marks: ChartMarks,
        to_html: Callable[[Figure, str], str],
    ) -> None:
        self._con, self._d, self._figures, self._marks, self._to_html = con, diagnosis, figures, marks, to_html
        self._zoomed: dict[str, Figure | None] = {}
        self.shown: dict[str, int] = {}  # div id -> the finding it is drawn with

    def chart_for(self, index: int, finding: Finding, draw: bool) -> tuple[str, bool]:
        """(HTML, drawn): the finding's chart when ``draw`` and not drawn before, else a link to it."""
        spec = self._d.rule_reports.get(finding.rule)
        if spec is None or spec.chart not in self._figures:
            return "", False
        step = finding_step(finding) if spec.zoom == "step" and draw else None
        fig = self._zoom(spec.chart, step) if step is not None else None
        div_id, fig = (chart_div_id(spec.chart, step), fig) if fig is not None else (chart_div_id(spec.chart), None)
        fig = fig if fig is not None else self._figures[spec.chart]
        if draw and div_id not in self.shown:
            self.shown[div_id] = index
            return self._to_html(fig, div_id), True
        where = f"shown with finding {self.shown[div_id]}" if div_id in self.shown else "in Charts below"
        return chart_link(div_id, chart_title(fig), where), False

    def charts_section(self, keys: list[str]) -> str:
        """The general charts no finding drew, and links to those drawn beside findings."""
        left = sorted((k for k in keys if chart_div_id(k) not in self.shown), key=lambda k: k not in WIDE_CHARTS)
        drawn = "".join(
            f'<div class="chart{" wide" * (k in WIDE_CHARTS)}">{self._to_html(self._figures[k], chart_div_id(k))}</div>'
            for k in left
        )
        beside = sorted((self.shown[chart_div_id(k)], k) for k in keys if chart_div_id(k) in self.shown)
        links = ", ".join(
            f'<a href="#{chart_div_id(k)}">{chart_title(self._figures[k])}</a> (finding {index})' for index, k in beside
        )
        note = f'<p class="chart-ref">Shown beside the findings: {links}</p>' if links else ""
        return f'<section id="charts"><h2>Charts</h2>{note}<div class="chart-grid">{drawn}</div></section>'

    def _zoom(self, key: str, step: int) -> Figure | None:
        div_id = chart_div_id(key, step)
        if div_id not in self._zoomed:
            self._zoomed[div_id] = self._zoomed_figure(key, step)
        return self._zoomed[div_id]

    def _zoomed_figure(self, key: str, step: int) -> Figure | None:
        """The chart of one step; None when it would show what the whole chart shows, or cannot zoom."""
        run_id = self._d.run_id
        if key != "busy" and key not in TIME_AXIS_CHARTS:
            return None
        window = series.step_window(self._con, run_id, step)
        if window is None:
            return None
        if key == "busy":
            busy = series.busy_over_time(self._con, run_id, window_ns=(window[0], window[1]))
            fig = charts.busy_chart(busy, series.idle_stretches(self._con, run_id), 100 * self._marks.limit(key, 0.30))
        else:
            fig = self._figures[key]
        zoom = {"title": {"text": f"{chart_title(fig)} - step {esc(step)}"}, "xaxis": {"range": [window[2], window[3]]}}
        return charts.figure(list(fig.data), fig.layout, zoom)
