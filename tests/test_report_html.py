"""The HTML report as text: self-contained, deterministic, escaped, every finding and chart present."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from plotly.offline import get_plotlyjs

from analyzer.diagnosis_model import Diagnosis
from analyzer.ingest.database import connect
from analyzer.report.html import CHARTS, RUNS_CHARTS, figure_html, render_html, write_html
from analyzer.report.html_about import DEVICE_TASK_RANGE_LABEL
from analyzer.report.job_page import JOB_CHARTS
from analyzer.rule_engine.model import ReportSpec
from analyzer.rule_engine.validation import CHART_KINDS
from tests.report_cases import (
    FINDING_RULES,
    HOSTILE_IMG,
    HOSTILE_SCRIPT,
    T0,
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


def _chart_ids(page: str) -> list[str]:
    return re.findall(r'<div id="(chart-[a-z0-9-]+)" class="plotly-graph-div"', page)


@pytest.mark.slow
def test_render_html_hostile_run_has_every_finding_and_each_chart_once(hostile):
    page = hostile[2]
    for i, rule in enumerate(FINDING_RULES, 1):
        assert f'id="finding-{i}"' in page
        assert rule[4] in page
    ids = _chart_ids(page)
    assert len(ids) == len(set(ids))
    assert {f"chart-{key.replace('_', '-')}" for key in CHARTS} <= set(ids)


def test_render_html_finding_shows_the_chart_its_rule_file_declares(con):
    """The chart comes from the rule's [report] table, whatever the rule is called."""
    diagnosis = diagnosis_for(con, "hostile")
    first = diagnosis.findings[0]
    reports = {f.rule: ReportSpec() for f in diagnosis.findings} | {first.rule: ReportSpec(chart="hbm")}
    page = render_html(replace(diagnosis, rule_reports=reports), con)
    section = page[page.index('id="finding-1"') : page.index('id="finding-2"')]
    assert 'id="chart-hbm"' in section
    assert 'class="plotly-graph-div"' not in page[page.index('id="finding-2"') : page.index('id="charts"')]


def test_render_html_shared_chart_is_drawn_once_and_linked(con):
    diagnosis = diagnosis_for(con, "hostile")
    reports = {f.rule: ReportSpec(chart="pipeline") for f in diagnosis.findings}
    page = render_html(replace(diagnosis, rule_reports=reports), con)
    assert _chart_ids(page).count("chart-pipeline") == 1
    assert page.count('<a href="#chart-pipeline">') >= len(diagnosis.findings) - 1


def test_render_html_later_findings_of_a_rule_refer_to_the_first_one_advice(con):
    diagnosis = diagnosis_for(con, "hostile")
    first = diagnosis.findings[0]
    again = replace(first, subject="Other")
    page = render_html(replace(diagnosis, findings=(first, again)), con)
    second = page[page.index('id="finding-2"') :]
    assert 'as for <a href="#finding-1">finding 1</a>' in second
    assert '<details class="evidence"><summary>evidence (2 rows)</summary>' in second
    assert first.advice_steps[0] not in second


def test_render_html_info_findings_folded_and_no_empty_numbers(con):
    diagnosis = diagnosis_for(con, "hostile")
    last = replace(diagnosis.findings[-1], severity="info", threshold=None, impact_us=0.0, evidence=())
    page = render_html(replace(diagnosis, findings=(*diagnosis.findings[:-1], last)), con)
    folded = page[page.index('<details id="info-findings">') :]
    assert f'id="finding-{len(diagnosis.findings)}"' in folded
    assert "threshold: <b>—" not in page and "No evidence rows" not in page
    assert "recoverable: <b>0.000 ms" not in page


def test_chart_kinds_the_rules_may_declare_are_the_charts_drawn():
    assert set(CHART_KINDS) == set(CHARTS) | set(RUNS_CHARTS) | set(JOB_CHARTS)


def test_report_and_cli_code_names_no_builtin_rule():
    """A rule's chart and marks live in its file: presentation code never names a built-in rule."""
    root = Path(__file__).resolve().parents[1]
    names = [p.stem for p in (root / "rules").glob("*/*.toml")]
    for folder in ("analyzer/report", "analyzer/cli", "analyzer/diff", "analyzer/runs"):
        for path in (root / folder).glob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert not [n for n in names if f'"{n}"' in text or f"'{n}'" in text], path


def test_render_html_hostile_names_never_appear_raw(hostile):
    page = hostile[2]
    assert HOSTILE_SCRIPT not in page
    assert HOSTILE_IMG not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    # the only closing script tags are ours: the error collector, plotly.js, and one per figure
    assert page.count("</script>") == 2 + len(_chart_ids(page))


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


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("chart", ["gap_positions", "hbm", "busy"])
def test_render_html_per_step_finding_draws_its_chart_zoomed_to_the_step(con, chart):
    """A rule declaring a time chart with zoom = "step": its per-step finding draws that chart over the step's
    window, titled with the step; the whole-run chart still stands in the general charts, unchanged."""
    diagnosis = add_hostile_run(con)
    con.execute(
        "UPDATE steps SET start_ns = $t0 + step_id * 1000000, end_ns = $t0 + (step_id + 1) * 1000000", {"t0": T0}
    )
    first = replace(diagnosis.findings[0], subject="step 1")
    reports = {f.rule: ReportSpec() for f in diagnosis.findings} | {first.rule: ReportSpec(chart=chart, zoom="step")}
    page = render_html(replace(diagnosis, findings=(first, *diagnosis.findings[1:]), rule_reports=reports), con)
    key = chart.replace("_", "-")
    assert _chart_ids(page).count(f"chart-{key}-step-1") == 1 and _chart_ids(page).count(f"chart-{key}") == 1
    zoomed = page[page.index(f'id="chart-{key}-step-1"') :]
    layout = zoomed[zoomed.index("Plotly.newPlot(") :].split("\n")[0]
    assert '- step 1"' in layout and '"range":[' in layout.replace(" ", "")
    whole = page[page.index(f'id="chart-{key}"') :]
    assert "- step 1" not in whole[whole.index("Plotly.newPlot(") :].split("\n")[0]
