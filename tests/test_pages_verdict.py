"""Verdict-first pages and readable charts (issue 46 items 1-2), on the rendered HTML and the built figures.

The browser checks (where the first finding's card lands, the index filter) are in test_report_browser.py.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from analyzer.diagnosis_model import BreakdownPart, Diagnosis, TimeBreakdown
from analyzer.ingest.database import connect
from analyzer.logs.model import LogReport
from analyzer.report.charts import calls_chart, pipeline_chart
from analyzer.report.html import render_html
from analyzer.report.html_about import summary_pairs
from analyzer.report.html_verdict import RANKING_NOTE
from analyzer.report.index_page import render_index
from analyzer.report.job_charts import link_bandwidth_figure, rank_step_heatmap
from analyzer.report.job_page import job_step_breakdown
from analyzer.report.logs_index import render_logs_index
from analyzer.report.scaling_chart import sweep_chart
from analyzer.rule_engine.model import ExplainedBy
from tests.plotly_view import validated
from tests.report_cases import add_hostile_run


@pytest.fixture(scope="module")
def hostile():
    con = connect()
    yield con, add_hostile_run(con)
    con.close()


def _page_numbers(page: str) -> list[int]:
    return [int(n) for n in re.findall(r'<section class="finding [a-z ]+" id="finding-(\d+)"', page)]


@pytest.mark.slow
def test_verdict_comes_before_the_findings_and_the_metadata_after_them(hostile):
    con, d = hostile
    parts = (BreakdownPart("computing", "computing", 400.0, 40.0), BreakdownPart("free_after", "free", 600.0, 60.0))
    breakdown = TimeBreakdown(1000.0, "step", "step_trace_time", "1 step", parts, "computing 40.0%")
    page = render_html(replace(d, summary=replace(d.summary, breakdown=breakdown)), con)
    verdict, findings, about = (page.index(f'id="{s}"') for s in ("verdict", "findings", "about"))
    assert verdict < findings < about
    top = page[verdict:findings]
    assert 'class="bar"' in top and "width:40.00%" in top and RANKING_NOTE in top
    assert "recoverable <b>10.000 ms</b> (5.0%)" in top  # the first finding's recoverable time


def test_findings_are_numbered_in_page_order_when_an_info_finding_outranks_a_warning(hostile):
    """Info findings are shown after the others: their numbers follow, so the page reads 1, 2, 3, ..."""
    con, d = hostile
    first, second, *rest = d.findings
    page = render_html(replace(d, findings=(first, replace(second, severity="info"), *rest)), con)
    numbers = _page_numbers(page)
    assert numbers == list(range(1, len(d.findings) + 1))
    assert f'id="finding-{len(d.findings)}"' in page[page.index('id="info-findings"') :]


def test_metadata_is_in_words_without_empty_rows():
    pairs = dict(
        summary_pairs(
            {
                "computing_ratio": 0.065,
                "computing_pct": 6.5,
                "span_us": 136581.0,
                "span_basis": "step",
                "span_source": "export step decomposition",
                "step_computing_ratio_min": None,
                "step_computing_ratio_median": None,
                "step_computing_lowest_step": None,
                "task_range_us": 1.0,
            }
        )
    )
    assert pairs == {
        "computing share of the span": "6.5%",
        "time span": "136.581 ms (step, export step decomposition)",
    }
    con = connect()
    page = render_html(Diagnosis(run_id="r", run={"run_id": "r"}, summary={}, outcomes=(), findings=()), con)
    about = page[page.index('id="about"') :]
    assert "—" not in about and "computing_ratio" not in about


def test_long_subject_is_cut_with_the_whole_of_it_on_hover(hostile):
    con, d = hostile
    shape = "FlashAttentionScoreGrad [" + ";".join(["4096,1,2048"] * 10) + "]"
    f = replace(d.findings[0], subject=shape, message=f"{shape}: MTE takes 47% of core time")
    page = render_html(replace(d, findings=(f, *d.findings[1:])), con)
    assert f'title="{shape}"' in page
    assert f"<b>{shape}</b>" not in page and f"{shape}:" not in page


def test_evidence_headers_may_break_after_underscores(hostile):
    con, d = hostile
    f = replace(d.findings[0], evidence_columns=("op_name", "aic_mte2_time_us"), evidence=(("x", 1.0),))
    page = render_html(replace(d, findings=(f, *d.findings[1:])), con)
    assert "<th>aic_<wbr>mte2_<wbr>time_<wbr>us</th>" in page


def test_index_lists_worst_first_with_path_and_filter(hostile):
    _, d = hostile
    mild = replace(
        d,
        run_id="a_mild",
        run={"source_path": "exports/a_mild"},
        findings=tuple(replace(f, span_share=0.01) for f in d.findings),
    )
    none = replace(d, run_id="0_none", run={"source_path": "exports/0_none"}, findings=())
    worst = replace(d, run_id="z_worst", run={"source_path": "exports/z_worst"})
    page = render_index(
        [(mild, Path("a/report.html")), (none, Path("b/report.html")), (worst, Path("c/report.html"))],
        Path("index.html"),
    )
    assert re.findall(r'<td class="path">([^<]+)</td>', page) == ["exports/z_worst", "exports/a_mild", "exports/0_none"]
    assert '<input id="filter"' in page and "addEventListener('input'" in page and "src=" not in page


def test_index_lists_ranks_whose_finding_a_job_finding_explains_after_the_others(hostile):
    _, d = hostile
    why = ExplainedBy("JOB001", "slow-rank", "rank 7", "waiting for rank 7", "warning")
    waiting = replace(
        d,
        run_id="a_waiting",
        run={"source_path": "exports/a_waiting"},
        findings=tuple(replace(f, severity="info", explained_by=why) for f in d.findings),
    )
    mild = replace(
        d,
        run_id="b_mild",
        run={"source_path": "exports/b_mild"},
        findings=tuple(replace(f, span_share=0.01) for f in d.findings),
    )
    page = render_index([(waiting, Path("a/report.html")), (mild, Path("b/report.html"))], Path("index.html"))
    assert re.findall(r'<td class="path">([^<]+)</td>', page) == ["exports/b_mild", "exports/a_waiting"]


def test_pipe_shares_stand_side_by_side_not_stacked():
    shares = pl.DataFrame(
        {
            "op_type": ["Conv2D", "MatMul"],
            "core_time_us": [10.0, 5.0],
            "cube_share": [0.7, 0.9],
            "vector_share": [0.5, 0.1],
            "scalar_share": [0.6, 0.2],
            "mte_share": [0.8, 0.3],
        }
    )
    fig = validated(pipeline_chart(shares))
    assert fig.layout.barmode == "group" and tuple(fig.layout.yaxis.range) == (0, 105.0)


def test_calls_chart_names_the_busiest_types_without_hovering():
    calls = pl.DataFrame(
        {
            "op_type": [f"Op{i}" for i in range(8)],
            "call_count": list(range(1, 9)),
            "avg_us": [10.0] * 8,
            "total_us": [float(100 - i) for i in range(8)],
            "time_rank": list(range(1, 9)),
            "hotspot": [False] * 8,
        }
    )
    named = [t for t in validated(calls_chart(calls)).data[0].text if t]
    assert named == ["Op0", "Op1", "Op2", "Op3", "Op4"]


def test_link_heatmap_is_sized_to_the_ranks_present_and_coloured_from_zero():
    """Two ranks with exports, links measured to eight: a 2 x 2 heatmap whose colours start at 0 GB/s."""
    rows = [
        {"transport": "HCCS", "src_rank": s, "dst_rank": d, "gb_per_s": 15.2 + 0.1 * d}
        for s in (0, 1)
        for d in range(8)
        if s != d
    ]
    (heat,) = validated(link_bandwidth_figure(rows, present={0, 1})).data
    assert list(heat.x) == [0, 1] and list(heat.y) == [0, 1] and len(heat.z) == 2
    assert heat.zmin == 0 and heat.texttemplate


def test_rank_step_heatmap_colours_start_at_zero():
    rows = [
        {
            "rank": r,
            "step_id": 50,
            "computing_us": 8900.0 + r,
            "comm_not_overlapped_us": 96000.0 + 6000 * r,
            "free_us": 25700.0,
        }
        for r in (0, 1)
    ]
    axis = validated(rank_step_heatmap(rows)).layout.coloraxis
    assert (axis.cmin, axis.cmax) == (0, 102.0)


def test_sweep_panels_start_at_zero():
    columns = ("model_name", "batch_size", "busy_ratio", "step_time_us", "per_sample_us", "throughput_samples_per_s")
    rows = pa.Table.from_pylist(
        [
            dict(zip(columns, ("m", 1, 0.40, 1000.0, 1000.0, 1000.0), strict=True)),
            dict(zip(columns, ("m", 2, 0.44, 1100.0, 550.0, 1818.0), strict=True)),
        ]
    )
    layout = validated(sweep_chart(rows)).layout
    assert {layout[f"yaxis{s}"].rangemode for s in ("", "2", "3")} == {"tozero"}


def test_logs_index_lists_the_collections_worst_first(hostile):
    _, d = hostile
    summary = {"files": 1, "records": 10, "error_records": 2}
    warning = replace(d.findings[0], severity="warning")
    critical = replace(d.findings[0], severity="critical", subject="K" * 80)
    pages = [
        (LogReport("a_quiet", summary, [], []), Path("a/logs.html")),
        (LogReport("b_warned", summary, [warning], []), Path("b/logs.html")),
        (LogReport("c_failed", summary, [critical], []), Path("c/logs.html")),
    ]
    page = render_logs_index(pages, Path("logs-index.html"))
    assert re.findall(r'href="(\w)/logs.html"', page) == ["c", "b", "a"]
    assert f'title="{"K" * 80}"' in page


def test_job_verdict_bar_is_the_rank_computing_longest():
    # rank 0 waits for rank 1 and its step comes out a hair longer: the bar still shows rank 1, the one computing
    steps = [
        {"rank": r, "step_id": s, "computing_us": c, "comm_not_overlapped_us": w, "free_us": 0.0}
        for r, c, w in ((0, 60.0, 40.5), (1, 90.0, 10.0))
        for s in (1, 2)
    ]
    bar = job_step_breakdown(steps)
    assert bar is not None and bar.subject == "rank 1, computing longest; mean of 2 step(s)"
    assert [(p.us, p.pct) for p in bar.parts] == [(90.0, 90.0), (10.0, 10.0), (0.0, 0.0)]
    assert job_step_breakdown([]) is None


def test_job_verdict_bar_shares_add_up_to_100_as_the_runs_do():
    """Each share rounded alone would give 6.7 + 73.0 + 20.2 = 99.9% (the real 2-rank job's rank 1, in ms): the
    tenths left over go to the largest remainders, as the run's breakdown rounds them."""
    steps = [{"rank": 1, "step_id": 50, "computing_us": 8878.0, "comm_not_overlapped_us": 96359.0, "free_us": 26675.0}]
    bar = job_step_breakdown(steps)
    assert bar is not None and [p.pct for p in bar.parts] == [6.7, 73.1, 20.2]
    assert round(sum(p.pct for p in bar.parts), 1) == 100.0
