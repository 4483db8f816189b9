"""The charts as plain dicts (report/plain_figure.py) are exactly what plotly would write for them, and the
series of many pages read at once (report/runs_reader.py) are the ones each page reads alone."""

from __future__ import annotations

import json
from pathlib import Path

import plotly.graph_objects as go
import plotly.io as pio
import pytest

import analyzer
from analyzer.api.reports import report_all, report_settings
from analyzer.report import busy_series, memory_series, roofline_series, series
from analyzer.report.html import build_figures
from analyzer.report.job_page import JOB_CHARTS, render_job_page
from analyzer.report.runs_reader import RunsReader, chunk_sql

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "examples"


def _as_plotly_writes_it(fig_dict: dict) -> dict:
    """The figure built by plotly's graph objects (every property validated and coerced), as its JSON."""
    return json.loads(pio.to_json(go.Figure(fig_dict), validate=True))


@pytest.fixture(scope="module")
def sweep():
    """Five runs of one model at several batch sizes: several run pages from one connection."""
    with analyzer.load(EXAMPLES / "batch_sweep") as trace:
        yield trace, analyzer.diagnose_runs(trace)


@pytest.mark.slow
def test_every_run_chart_is_what_plotly_writes_for_it(sweep):
    trace, diagnoses = sweep
    figures = build_figures(trace.con, diagnoses[0])
    assert len(figures) >= 10
    for key, fig in figures.items():
        ours = json.loads(json.dumps(fig.to_dict()))
        assert _as_plotly_writes_it(fig.to_dict()) == ours, key


@pytest.mark.slow
def test_the_job_charts_are_what_plotly_writes_for_them():
    with analyzer.load(EXAMPLES / "job_slow_rank") as trace:
        (job,) = analyzer.diagnose_jobs(trace)
        page = render_job_page(job, trace.con)
    drawn = [key for key in JOB_CHARTS if f'id="{key.replace("_", "-")}"' in page]
    assert len(drawn) >= 3
    for figure_json in _page_figures(page):
        assert _as_plotly_writes_it(figure_json) == figure_json


def _page_figures(page: str) -> list[dict]:
    """Each figure of a page, as the (data, layout) its Plotly.newPlot call draws."""
    decoder, figures, pos = json.JSONDecoder(), [], 0
    while (start := page.find("Plotly.newPlot(", pos)) >= 0:
        _, end = decoder.raw_decode(page, page.index('"', start))
        data, end = decoder.raw_decode(page, page.index("[", end))
        layout, pos = decoder.raw_decode(page, page.index("{", end))
        figures.append({"data": data, "layout": layout})
    return figures


SERIES = [
    series.busy_over_time,
    series.idle_stretches,
    series.op_type_pareto,
    series.op_type_calls,
    series.pipeline_breakdown,
    series.gap_histogram,
    series.gap_positions,
    series.log_marks,
    series.step_breakdown,
    series.hbm_bandwidth,
    memory_series.memory_over_time,
    memory_series.step_starts,
    memory_series.core_activity,
    memory_series.sampled_core_utilization,
    memory_series.memory_peak,
    memory_series.memory_at_peak,
    roofline_series.roofline_families,
]


@pytest.mark.slow
def test_every_series_filter_on_its_run_keeps_only_the_chunks_runs(sweep, monkeypatch):
    # a `$run` not in the form `run_id = $run` is filtered after the query's CTEs are built over every run
    # of the connection: a chunk would then cost the whole job, and a job of N ranks N squared
    trace, diagnoses = sweep
    asked: list[str] = []
    read_all = RunsReader._read_all
    monkeypatch.setattr(RunsReader, "_read_all", lambda self, sql, *a: asked.append(sql) or read_all(self, sql, *a))
    monkeypatch.setattr(busy_series, "busy_parts", lambda *a, **k: None)  # busy rows by query (numpy's fallback)
    monkeypatch.setattr(busy_series, "idle_parts", lambda *a, **k: None)  # and idle stretches
    monkeypatch.setattr(series, "_chunk_gap_positions", lambda *a, **k: None)  # and the longest gaps
    reader = RunsReader(trace.con, [d.run_id for d in diagnoses])
    for read in SERIES:
        read(reader, diagnoses[0].run_id)
    assert len(asked) >= len(SERIES) - 1  # op_type_pareto and op_type_calls read one query
    for sql in asked:
        assert chunk_sql(sql).count("IN (SELECT unnest($__runs::VARCHAR[]))") == sql.count("$run"), sql


@pytest.mark.slow  # reads every chart twice: the full suite, not the fast loop
def test_series_read_for_all_runs_at_once_are_each_runs_own(sweep):
    trace, diagnoses = sweep
    runs = [d.run_id for d in diagnoses]
    reader = RunsReader(trace.con, runs, chunk=2)  # three chunks of the five runs
    for read in SERIES:
        for run in reversed(runs):  # not in the reader's order
            alone, together = read(trace.con, run), read(reader, run)
            assert together.to_dicts() == alone.to_dicts(), (read.__name__, run)
    assert memory_series.time_range(reader, runs[1]) == memory_series.time_range(trace.con, runs[1])
    for run in runs:  # a page written: its chunk's rows go once all its pages are; a later ask reads again
        reader.done(run)
    assert series.busy_over_time(reader, runs[0]).to_dicts() == series.busy_over_time(trace.con, runs[0]).to_dicts()


@pytest.mark.slow  # writes every page twice: the full suite, not the fast loop
def test_pages_written_together_are_the_pages_written_one_by_one(sweep, tmp_path):
    trace, diagnoses = sweep
    one_by_one = [analyzer.report(d, tmp_path / "alone", ["html"], trace=trace) for d in diagnoses]
    together = report_all(diagnoses, report_settings(tmp_path / "together", ["html"], trace, False), trace=trace)
    assert [d.run_id for d, _ in together] == [d.run_id for d in diagnoses]
    for (page,), (_, (same,)) in zip(one_by_one, together, strict=True):
        assert same.read_text(encoding="utf-8") == page.read_text(encoding="utf-8")
