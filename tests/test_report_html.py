"""The HTML report as text: self-contained, deterministic, escaped, every finding and chart present."""

from __future__ import annotations

import re

import pytest
from plotly.offline import get_plotlyjs

from analyzer.ingest.database import connect
from analyzer.report.html import CHARTS, chart_for_rule, figure_html, render_html, write_html
from analyzer.report.html_sections import DEVICE_TASK_RANGE_LABEL
from analyzer.report.model import Diagnosis
from tests.report_cases import (
    FINDING_RULES,
    HOSTILE_IMG,
    HOSTILE_SCRIPT,
    add_hostile_run,
    diagnosis_for,
)


@pytest.fixture(scope="module")
def hostile():
    """(connection, diagnosis, rendered page) of the hostile-names run, rendered once for the module."""
    con = connect()
    diagnosis = add_hostile_run(con)
    yield con, diagnosis, render_html(diagnosis, con)
    con.close()


def test_render_html_hostile_run_has_every_finding_and_chart(hostile):
    page = hostile[2]
    for i, rule in enumerate(FINDING_RULES, 1):
        assert f'id="finding-{i}"' in page
        assert rule[4] in page
        assert f'id="finding-{i}-chart-{chart_for_rule(rule[0], rule[3]).replace("_", "-")}"' in page
    for key in CHARTS:
        assert f'id="chart-{key.replace("_", "-")}"' in page


def test_render_html_hostile_names_never_appear_raw(hostile):
    page = hostile[2]
    assert HOSTILE_SCRIPT not in page
    assert HOSTILE_IMG not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    # the only closing script tags are ours: the error collector, plotly.js, and one per figure
    assert page.count("</script>") == 2 + len(CHARTS) + len(FINDING_RULES)


def test_render_html_is_self_contained_with_plotly_once(hostile):
    page = hostile[2]
    plotly_js = get_plotlyjs()
    assert page.count(plotly_js) == 1
    ours = page.replace(plotly_js, "")
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=|@import|url\(", ours)
    assert "http://" not in ours and "https://" not in ours


def test_render_html_same_input_gives_same_bytes(hostile):
    con, diagnosis, page = hostile
    assert render_html(diagnosis, con) == page


def test_render_html_empty_run_says_not_collected(con):
    diagnosis = Diagnosis(run_id="empty", run={}, summary={}, outcomes=(), findings=())
    page = render_html(diagnosis, con)
    assert page.count("not collected:") == len(CHARTS)
    assert "No findings" in page and "No rules were run." in page


def test_render_html_missing_pmu_only_pipeline_not_collected(con):
    add_hostile_run(con)
    con.execute("UPDATE ops SET core_time_us = NULL")
    page = render_html(diagnosis_for(con, "hostile"), con)
    assert "not collected: PMU pipeline metrics" in page


def test_figure_html_closing_script_in_string_is_escaped():
    import plotly.graph_objects as go

    fragment = figure_html(go.Figure(go.Bar(x=["</script><b>"], y=[1])), "x")
    assert fragment.count("</script>") == 1


def test_write_html_replaces_atomically_and_leaves_no_temp(hostile, tmp_path):
    con, diagnosis, _ = hostile
    target = tmp_path / "out" / "report.html"
    target.parent.mkdir()
    target.write_text("old")
    assert write_html(diagnosis, con, target) == target
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert [p.name for p in target.parent.iterdir()] == ["report.html"]


def test_render_html_run_card_names_its_range_apart_from_the_steps_span(con):
    """The run card's range (first device task start to last end) and the summary's span_us (the
    steps' window here) are different numbers; the card's label says which one it shows."""
    run = {"start_ns": 1_000_000, "end_ns": 31_582_000}
    summary = {"span_us": 32143.7, "span_source": "steps"}
    page = render_html(Diagnosis(run_id="r", run=run, summary=summary, outcomes=(), findings=()), con)
    assert f"<th>{DEVICE_TASK_RANGE_LABEL}</th><td>30.582</td>" in page
    assert "<th>span (ms)</th>" not in page
