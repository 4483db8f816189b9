"""One self-contained offline HTML page per run: header, ranked findings with their charts, general charts, problems.

The all-runs page holds only what is about several runs: the runs compared, the rules comparing
them, and their findings with their charts (no run card, general chart or problem: those are per
run).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

import duckdb
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from analyzer.atomic_files import write_text_atomically
from analyzer.report import charts, runs_series, series
from analyzer.report.html_sections import (
    findings_section,
    header_section,
    problems_section,
    runs_header_section,
)
from analyzer.report.html_style import CSS, ERROR_COLLECTOR
from analyzer.report.model import Diagnosis
from analyzer.report.scaling_chart import sweep_chart
from analyzer.rule_engine.chip_table import CHIP_KEY
from analyzer.rule_engine.views import create_views

GAP_THRESHOLD_US = 200.0  # the highlight when the diagnosis carries no chip table values
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

HOTSPOT_RULE = "call-count-hotspot"  # the rule whose findings the calls chart marks as hotspots

# Chart key -> builder from the connection and the run's Diagnosis. Order is the order of the
# general charts on the page.
CHARTS: dict[str, Callable[[duckdb.DuckDBPyConnection, Diagnosis], go.Figure]] = {
    "busy": lambda con, d: charts.busy_chart(
        series.busy_over_time(con, d.run_id), series.idle_stretches(con, d.run_id)
    ),
    "pareto": lambda con, d: charts.pareto_chart(series.op_type_pareto(con, d.run_id)),
    "pipeline": lambda con, d: charts.pipeline_chart(series.pipeline_breakdown(con, d.run_id)),
    "gap_histogram": lambda con, d: charts.gap_histogram_chart(
        series.gap_histogram(con, d.run_id), gap_threshold_us(d)
    ),
    "gap_positions": lambda con, d: charts.gap_positions_chart(
        series.gap_positions(con, d.run_id), gap_threshold_us(d)
    ),
    "calls": lambda con, d: charts.calls_chart(series.op_type_calls(con, d.run_id, hotspot_subjects(d)), HOTSPOT_RULE),
    "steps": lambda con, d: charts.step_chart(series.step_breakdown(con, d.run_id)),
    "hbm": lambda con, d: charts.hbm_chart(series.hbm_bandwidth(con, d.run_id)),
}

# Rule of scope 'runs' -> (chart key, builder from the runs compared and the finding's subject), for
# the all-runs page; such a rule without an entry shows its evidence table only.
RunsChart = Callable[[duckdb.DuckDBPyConnection, list[str], str], go.Figure]
RUNS_CHARTS: dict[str, tuple[str, RunsChart]] = {
    "batch-size-scaling": (
        "scaling",
        lambda con, runs, subject: sweep_chart(runs_series.scaling_rows(con, runs, subject)),
    ),
}

# Rule name -> the chart shown beside its findings; unknown rules fall back on keywords, then category.
RULE_CHARTS = {
    "low-aicore-utilization": "busy",
    "mte-share-high": "pipeline",
    "inter-op-gap": "gap_positions",
    "call-count-hotspot": "calls",
    "communication-not-overlapped": "steps",
    "pipeline-bound-classification": "pipeline",
    "hbm-bandwidth-saturated": "hbm",
    "aicore-frequency-drop": "busy",
    "aicpu-operators": "pareto",
    "format-conversion-overhead": "pareto",
    "block-dim-mismatch": "pareto",
}
_KEYWORD_CHARTS = (
    ("hbm", "hbm"),
    ("bandwidth", "hbm"),
    ("pipeline", "pipeline"),
    ("mte", "pipeline"),
    ("bound", "pipeline"),
    ("gap", "gap_positions"),
    ("host", "gap_positions"),
    ("sync", "gap_positions"),
    ("comm", "steps"),
    ("step", "steps"),
    ("idle", "busy"),
    ("utilization", "busy"),
    ("busy", "busy"),
    ("freq", "busy"),
    ("call", "calls"),
)
_CATEGORY_CHARTS = {
    "compute": "pareto",
    "memory": "pipeline",
    "communication": "steps",
    "scheduling": "gap_positions",
    "host": "gap_positions",
}


def chart_for_rule(rule: str, category: str = "") -> str:
    """The chart key shown beside a rule's findings.

    >>> chart_for_rule("mte-share-high"), chart_for_rule("hbm-saturated"), chart_for_rule("x", "compute")
    ('pipeline', 'hbm', 'pareto')
    """
    if rule in RULE_CHARTS:
        return RULE_CHARTS[rule]
    for word, key in _KEYWORD_CHARTS:
        if word in rule:
            return key
    return _CATEGORY_CHARTS.get(category, "pareto")


def figure_html(fig: go.Figure, div_id: str) -> str:
    """A figure as an HTML fragment with a fixed div id; plotly.js is expected on the page already.

    Plotly's JSON encoder writes '<', '>' and '/' inside strings as \\u003c, \\u003e and \\u002f,
    so no export string can close the script tag; the escape below keeps that true if it ever changes.
    """
    fragment = fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config=FIGURE_CONFIG)
    head, sep, tail = fragment.partition("<script")
    body, end_tag, rest = tail.rpartition("</script>")
    return head + sep + body.replace("</", "<\\/") + end_tag + rest if sep and end_tag else fragment


def gap_threshold_us(diagnosis: Diagnosis) -> float:
    """The gap threshold of the run's chip table values (what splits long gaps from launch gaps), so
    that the charts mark the gaps the time breakdown counts as long."""
    return float(diagnosis.params.get(CHIP_KEY, {}).get("gap_threshold_us", GAP_THRESHOLD_US))


def hotspot_subjects(diagnosis: Diagnosis) -> frozenset[str]:
    """The operator types the call-count-hotspot rule reported for the run (finding subjects)."""
    return frozenset(f.subject for f in diagnosis.findings if f.rule == HOTSPOT_RULE and f.run_id == diagnosis.run_id)


def build_figures(con: duckdb.DuckDBPyConnection, diagnosis: Diagnosis) -> dict[str, go.Figure]:
    """Every general chart of a run, keyed as in CHARTS.

    Busy time, gaps and operator types come from the rules' helper relations, created here when
    absent or stale; the calls chart's hotspots are the diagnosis's call-count-hotspot findings.
    """
    create_views(con)
    return {key: build(con, diagnosis) for key, build in CHARTS.items()}


def render_html(diagnosis: Diagnosis, con: duckdb.DuckDBPyConnection) -> str:
    """The report page of one run (or the all-runs page) as a string: deterministic, offline, every
    export string escaped.

    Args:
        diagnosis: the run's diagnosis (findings already ranked).
        con: the connection holding the run's normalized tables (charts are computed from them).
    Returns:
        A complete HTML document with plotly.js inlined once.
    """
    body = _runs_body(diagnosis, con) if diagnosis.compares_runs else _run_body(diagnosis, con)
    title = html.escape(f"npu-triage report: {diagnosis.run_id}")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n<script>{ERROR_COLLECTOR}</script>\n<style>{CSS}</style>\n"
        f'<script type="text/javascript">{get_plotlyjs()}</script>\n</head>\n<body>\n<main>\n'
        f"{body}\n</main>\n</body>\n</html>\n"
    )


def _run_body(diagnosis: Diagnosis, con: duckdb.DuckDBPyConnection) -> str:
    figures = build_figures(con, diagnosis)
    chart_html = {key: figure_html(fig, f"chart-{key.replace('_', '-')}") for key, fig in figures.items()}

    def finding_chart(index: int, rule: str, category: str) -> str:
        key = chart_for_rule(rule, category)
        return figure_html(figures[key], f"finding-{index}-chart-{key.replace('_', '-')}")

    general = "".join(f'<div class="chart">{chart_html[key]}</div>' for key in CHARTS)
    return (
        f"{header_section(diagnosis)}\n{findings_section(diagnosis, finding_chart)}\n"
        f'<section id="charts"><h2>Charts</h2><div class="chart-grid">{general}</div></section>\n'
        f"{problems_section(diagnosis)}"
    )


def _runs_body(diagnosis: Diagnosis, con: duckdb.DuckDBPyConnection) -> str:
    runs = list(diagnosis.run.get("runs") or [])

    def finding_chart(index: int, rule: str, category: str) -> str:
        if rule not in RUNS_CHARTS:
            return ""
        key, build = RUNS_CHARTS[rule]
        fig = build(con, runs, diagnosis.findings[index - 1].subject)
        return figure_html(fig, f"finding-{index}-chart-{key}")

    return f"{runs_header_section(diagnosis)}\n{findings_section(diagnosis, finding_chart)}"


def write_html(diagnosis: Diagnosis, con: duckdb.DuckDBPyConnection, path: Path | str) -> Path:
    """Render the report and write it atomically (a temp file beside it, then a rename). Returns the path."""
    return write_text_atomically(Path(path), render_html(diagnosis, con))
