"""One offline HTML page per run: the verdict (breakdown bar, top findings), the findings with their charts,
general charts, then what the run is (About this run) and the ingest problems.

Each chart is drawn once: a chart several findings share sits with the first of them and the
others link to it; a per-step finding gets its chart zoomed to its step (chart_placement.py).

The all-runs page holds only what is about several runs: the runs compared, the rules comparing
them, and their findings with their charts (no run card, general chart or problem: those are per
run).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from analyzer.diagnosis_model import Diagnosis, RunSummary
from analyzer.report import charts, memory_charts, memory_series, series
from analyzer.report.chart_marks import ChartMarks, chart_marks
from analyzer.report.chart_placement import ChartPlacement
from analyzer.report.html_about import run_about_section, runs_about_section
from analyzer.report.html_sections import (
    accuracy_section,
    failed_operators_section,
    findings_section,
    page_order,
    page_title,
    problems_section,
)
from analyzer.report.html_style import report_page
from analyzer.report.html_verdict import verdict_section
from analyzer.report.memory_section import memory_section
from analyzer.report.plain_figure import Figure, figure_div, figure_json
from analyzer.report.plotly_asset import write_page
from analyzer.report.runs_reader import READERS
from analyzer.report.scaling_chart import sweep_chart
from analyzer.rule_engine.model import Finding, ReportSpec

if TYPE_CHECKING:  # DuckDB is the main process's: a report worker draws pages from the series read for it
    import duckdb

FIGURE_CONFIG = {
    "displaylogo": False,
    "responsive": True,
    "modeBarButtonsToRemove": [
        "select2d",
        "lasso2d",
        "zoomIn2d",
        "zoomOut2d",
        "autoScale2d",
        "toggleSpikelines",
        "hoverClosestCartesian",
        "hoverCompareCartesian",
    ],
}

# Every chart of every page has the same config: its JSON is written once.
_CONFIG_JSON = figure_json(FIGURE_CONFIG)


class PageSeries:
    """The connection and run of one run page, with the series several of its charts draw (and the page's
    time range), each read once per page."""

    def __init__(self, con: duckdb.DuckDBPyConnection, run_id: str) -> None:
        self.con, self.run_id = con, run_id

    @cached_property
    def x_range(self) -> tuple[float, float] | None:
        return memory_series.page_time_range(self.con, self.run_id)

    @cached_property
    def busy(self) -> pl.DataFrame:
        return series.busy_over_time(self.con, self.run_id)

    @cached_property
    def hbm(self) -> pl.DataFrame:
        return series.hbm_bandwidth(self.con, self.run_id)

    @cached_property
    def memory(self) -> pl.DataFrame:
        return memory_series.memory_over_time(self.con, self.run_id)

    @cached_property
    def steps(self) -> pl.DataFrame:
        return memory_series.step_starts(self.con, self.run_id)


# Chart key -> builder from the page's series (and connection), the run's Diagnosis and what the rules ask
# the charts to mark. Order is the order of the general charts on the page. A rule picks one in its [report] table.
CHARTS: dict[str, Callable[[PageSeries, Diagnosis, ChartMarks], Figure]] = {
    "busy": lambda p, d, m: charts.busy_chart(
        p.busy, series.idle_stretches(p.con, d.run_id), 100 * m.limit("busy", 0.30)
    ),
    "pareto": lambda p, d, m: charts.pareto_chart(series.op_type_pareto(p.con, d.run_id)),
    "pipeline": lambda p, d, m: charts.pipeline_chart(
        series.pipeline_breakdown(p.con, d.run_id), m.limit("pipeline", 0.40)
    ),
    "gap_histogram": lambda p, d, m: charts.gap_histogram_chart(
        series.gap_histogram(p.con, d.run_id), m.limit("gap_histogram", 100.0)
    ),
    "gap_positions": lambda p, d, m: charts.gap_positions_chart(
        series.gap_positions(p.con, d.run_id), m.limit("gap_positions", 100.0), series.log_marks(p.con, d.run_id)
    ),
    "calls": lambda p, d, m: charts.calls_chart(
        series.op_type_calls(p.con, d.run_id, m.subjects.get("calls", frozenset())),
        ", ".join(m.markers.get("calls", ())),
    ),
    "steps": lambda p, d, m: charts.step_chart(series.step_breakdown(p.con, d.run_id)),
    "hbm": lambda p, d, m: charts.hbm_chart(p.hbm),
    "memory": lambda p, d, m: memory_charts.memory_chart(p.memory, p.steps, p.x_range, _device_memory_mb(p)),
    "timeline": lambda p, d, m: _timeline(p),
}
# The charts drawn against time: every one opens on the page's x range (memory_series.page_time_range).
SHARED_TIME_AXIS = ("busy", "hbm", "gap_positions", "memory")

# Chart key -> builder from the runs compared and the finding's subject, for the all-runs page.
RunsChart = Callable[["duckdb.DuckDBPyConnection", list[str], str], Figure]
RUNS_CHARTS: dict[str, RunsChart] = {
    "scaling": lambda con, runs, subject: sweep_chart(_scaling_rows(con, runs, subject)),
}


def _scaling_rows(con: duckdb.DuckDBPyConnection, runs: list[str], subject: str) -> pl.DataFrame:
    """runs_series.scaling_rows, imported only for an all-runs page (with pyarrow, which no run page needs)."""
    from analyzer.report.runs_series import scaling_rows

    return scaling_rows(con, runs, subject)


def _device_memory_mb(p: PageSeries) -> float | None:
    peak = memory_series.memory_peak(p.con, p.run_id)
    return None if peak.is_empty() else peak["device_memory_mb"][0]


def _timeline(p: PageSeries) -> Figure:
    """The stacked compute / HBM / memory / cores chart of the run on one x axis."""
    cores = memory_series.core_activity(p.con, p.run_id)
    return memory_charts.timeline_chart(
        p.busy,
        p.hbm,
        p.memory,
        cores,
        p.steps,
        p.x_range,
        memory_charts.core_gap(cores, memory_series.sampled_core_utilization(p.con, p.run_id)),
    )


def figure_html(fig: Figure, div_id: str) -> str:
    """A figure as an HTML fragment with a fixed div id; plotly.js is expected on the page already.

    figure_json (plain_figure.py) writes '<', '>' and '/' inside strings as \\u003c, \\u003e and \\u002f,
    so no export string can close the script tag.
    """
    return figure_div(fig.to_dict(), div_id, _CONFIG_JSON)


def build_figures(
    con: duckdb.DuckDBPyConnection, diagnosis: Diagnosis, marks: ChartMarks | None = None
) -> dict[str, Figure]:
    """Every general chart of a run, keyed as in CHARTS.

    Busy time, gaps and operator types come from the rules' helper relations, created here when
    absent or stale; limits and highlights are the ones the rules' [report] tables declare.
    """
    if not isinstance(con, READERS):  # a reader of many pages made the views once
        from analyzer.rule_engine.views import create_views

        create_views(con)
    marks = marks if marks is not None else chart_marks(diagnosis)
    page = PageSeries(con, diagnosis.run_id)
    figures = {key: build(page, diagnosis, marks) for key, build in CHARTS.items()}
    x_range = page.x_range
    if x_range is not None:
        for key in SHARED_TIME_AXIS:
            if figures[key].data:  # a chart with no data keeps its hidden axes and its message
                figures[key].update_layout({"xaxis": {"range": list(x_range)}})
    return figures


def render_html(diagnosis: Diagnosis, con: duckdb.DuckDBPyConnection, plotly_src: str | None = None) -> str:
    """The report page of one run (or the all-runs page) as a string: deterministic, offline, every
    export string escaped.

    Args:
        diagnosis: the run's diagnosis (findings already ranked).
        con: the connection holding the run's normalized tables (charts are computed from them).
        plotly_src: address of a shared plotly.js file (plotly_asset.py); None inlines plotly.js.
    Returns:
        A complete HTML document; each chart drawn once.
    """
    body = _runs_body(diagnosis, con) if diagnosis.compares_runs else _run_body(diagnosis, con)
    return report_page(f"npu-triage report: {diagnosis.run_id}", body, plotly_src)


def _run_body(diagnosis: Diagnosis, con: duckdb.DuckDBPyConnection) -> str:
    marks = chart_marks(diagnosis)
    figures = build_figures(con, diagnosis, marks)
    placement = ChartPlacement(con, diagnosis, figures, marks, figure_html)
    findings = findings_section(diagnosis, placement.chart_for)
    breakdown = diagnosis.summary.breakdown if isinstance(diagnosis.summary, RunSummary) else None
    verdict = verdict_section(page_order(diagnosis), breakdown, False)
    return (
        f"{page_title(diagnosis, f'npu-triage report: {diagnosis.run_id}')}\n{verdict}\n"
        f"{failed_operators_section(diagnosis)}{findings}\n"
        f"{accuracy_section(diagnosis)}\n{memory_section(con, diagnosis.run_id)}\n"
        f"{placement.charts_section(list(CHARTS))}\n"
        f"{run_about_section(diagnosis)}\n{problems_section(diagnosis)}"
    )


def _runs_body(diagnosis: Diagnosis, con: duckdb.DuckDBPyConnection) -> str:
    runs = list(diagnosis.run.get("runs") or [])

    def finding_chart(index: int, finding: Finding, draw: bool) -> tuple[str, bool]:
        key = diagnosis.rule_reports.get(finding.rule, ReportSpec()).chart
        if key not in RUNS_CHARTS or not draw:
            return "", False
        # one model (the subject) per finding: each finding's chart is a different one
        return figure_html(RUNS_CHARTS[key](con, runs, finding.subject), f"finding-{index}-chart-{key}"), True

    title = page_title(diagnosis, f"npu-triage report: {diagnosis.run_id}")
    verdict = verdict_section(page_order(diagnosis), None, False)
    return f"{title}\n{verdict}\n{findings_section(diagnosis, finding_chart)}\n{runs_about_section(diagnosis)}"


def write_html(
    diagnosis: Diagnosis, con: duckdb.DuckDBPyConnection, path: Path | str, shared_js: Path | None = None
) -> Path:
    """Render the report and write it atomically (a temp file beside it, then a rename). Returns the path.

    With ``shared_js`` (a folder), plotly.js is written there once and the page loads it from there.
    """
    return write_page(Path(path), lambda src: render_html(diagnosis, con, src), shared_js)
