"""A job's Diagnosis -> the job page: the verdict and findings as on a run page, the job charts, then the job's
ranks and rules (About this job) and problems."""

from __future__ import annotations

import math
from dataclasses import dataclass

import duckdb

from analyzer.diagnosis_model import BreakdownPart, Diagnosis, TimeBreakdown, job_summary
from analyzer.job.fixed_order import job_rows
from analyzer.job.metrics import rank_metrics
from analyzer.report import job_charts
from analyzer.report.chart_placement import chart_link, chart_title
from analyzer.report.html import figure_html
from analyzer.report.html_about import about_section
from analyzer.report.html_sections import (
    card,
    findings_section,
    kv_table,
    page_order,
    page_title,
    problems_section,
    table,
)
from analyzer.report.html_style import report_page
from analyzer.report.html_verdict import verdict_section
from analyzer.report.job_terminal import rank_ranges
from analyzer.rule_engine.model import Finding, ReportSpec

_STEPS = (
    "SELECT rank, step_id, computing_us, comm_not_overlapped_us, free_us FROM job_steps "
    "WHERE run_id = $job ORDER BY rank, step_id"
)
_LINKS = """
WITH l AS (SELECT * FROM job_links WHERE run_id = $job AND transport <> 'LOCAL' AND src_rank IS NOT NULL
              AND dst_rank IS NOT NULL AND transit_us > 0
              AND (matrix_op LIKE '%-total'
                   OR NOT EXISTS (SELECT 1 FROM job_links WHERE run_id = $job AND matrix_op LIKE '%-total')))
SELECT src_rank, dst_rank, transport, sum(transit_size_mb) / (sum(transit_us) / 1000) AS gb_per_s
FROM l GROUP BY ALL ORDER BY transport, src_rank, dst_rank
"""
_STAGES = """
SELECT r.pp_stage, avg(s.computing_us) AS computing_us, avg(s.comm_us) AS comm_us, avg(s.bubble_us) AS bubble_us,
       avg(s.free_us) AS free_us
FROM job_steps s JOIN job_ranks r USING (run_id, rank) WHERE s.run_id = $job AND r.pp_stage IS NOT NULL
GROUP BY r.pp_stage ORDER BY r.pp_stage
"""


def _job_pairs(d: Diagnosis) -> list[tuple[str, object]]:
    """The job card: ranks, world size, steps, aligned operations, groups, and the rank waited for most."""
    s, ranks = job_summary(d.summary), d.run.get("ranks") or []
    summary_only = [r["rank"] for r in ranks if not r["has_kernels"]]
    step = s.get("job_step_us")
    rows: list[tuple[str, object]] = [
        ("ranks", s.get("rank_count")),
        ("world size", d.run.get("world_size") or "unknown (not in the ranks' metadata)"),
        ("ranks with summaries only", rank_ranges(summary_only) or "none"),
        ("steps", s.get("step_count")),
        ("job step (ms, slowest rank)", None if step is None else round(step / 1000, 3)),
        (
            "communication ops aligned across ranks",
            f"{s.get('aligned_op_multi_rank_count')} of {s.get('aligned_op_count')}",
        ),
        ("groups", d.run.get("groups")),
    ]
    if s.get("most_waited_for_rank") is not None and step:  # as the terminal says it, also with no finding
        wait = s.get("caused_wait_per_step_us") or 0.0
        rows.append(
            (
                "most waited for",
                f"rank {s['most_waited_for_rank']}: the others wait {wait / 1000:,.2f} ms per step for it at the "
                f"collectives, {wait / step:.1%} of the job step",
            )
        )
    return rows


def _about(d: Diagnosis) -> str:
    rank_table = table(
        ["rank", "run", "export", "per-task data", "step trace", "communication", "matrix", "pp stage"],
        [
            [
                r["rank"],
                r["rank_run_id"],
                r["source_path"],
                r["has_kernels"],
                r["has_step_trace"],
                r["has_communication"],
                r["has_matrix"],
                r["pp_stage"],
            ]
            for r in d.run.get("ranks") or []
        ],
        "evidence",
    )
    ranks = f"<details><summary>Ranks</summary>{rank_table}</details>"
    pairs = [(k, v) for k, v in _job_pairs(d) if v is not None]
    return about_section(d, "About this job", [card("Job", kv_table(pairs))], ranks)


# The job page's charts, by the key a job rule's [report] chart names (the div id is the key with dashes).
JOB_CHARTS = ("job_rank_step", "job_wait_transit", "job_links", "job_stages")


_STEP_PARTS = (
    ("computing_us", "computing", "computing"),
    ("comm_not_overlapped_us", "communication not overlapped", "comm_not_overlapped"),
    ("free_us", "free", "free_after"),
)


def _shares_pct(times: list[float]) -> list[float]:
    """Each time's share of their sum in percent, one decimal, rounded as the run's breakdown rounds its shares
    (largest remainder, views/breakdown.sql _time_shares): the shares add up to exactly 100.0 (all 0 for no time).

    >>> _shares_pct([8.878, 96.359, 26.675]), _shares_pct([0.0, 0.0])
    ([6.7, 73.1, 20.2], [0.0, 0.0])
    """
    whole = sum(times)
    if whole <= 0:
        return [0.0] * len(times)
    tenths = [1000 * t / whole for t in times]
    floors = [math.floor(x) for x in tenths]
    # the tenths left over go to the largest remainders, the earlier part first on a tie
    for i in sorted(range(len(times)), key=lambda i: (floors[i] - tenths[i], i))[: 1000 - sum(floors)]:
        floors[i] += 1
    return [f / 10 for f in floors]


def job_step_breakdown(steps: list[dict]) -> TimeBreakdown | None:
    """The job step's time breakdown for the verdict bar: the mean computing, not-overlapped communication and free
    time per step of the rank computing longest (then the longest mean step, then the lowest rank); None without
    step rows.

    Not the rank with the longest step: in a synchronous job the ranks that wait for a slow one have steps as long
    as its own, so the longest step is any rank's by noise, and the bar would name a rank the verdict does not."""
    per_rank: dict[int, list[dict]] = {}
    for row in steps:
        per_rank.setdefault(row["rank"], []).append(row)
    if not per_rank:
        return None

    def mean(rows: list[dict], col: str) -> float:
        return sum(r[col] or 0.0 for r in rows) / len(rows)

    def total(rank: int) -> float:
        return sum(mean(per_rank[rank], col) for col, _, _ in _STEP_PARTS)

    rank = min(per_rank, key=lambda r: (-mean(per_rank[r], "computing_us"), -total(r), r))
    times = [mean(per_rank[rank], col) for col, _, _ in _STEP_PARTS]
    parts = tuple(
        BreakdownPart(part, label, us, pct)
        for (_, label, part), us, pct in zip(_STEP_PARTS, times, _shares_pct(times), strict=True)
    )
    subject = f"rank {rank}, computing longest; mean of {len(per_rank[rank])} step(s)"
    # the page words the job's verdict itself: no sentence of the parts (text)
    return TimeBreakdown(total(rank), "job step", "job_steps", subject, parts, text="")


def _div(key: str) -> str:
    return key.replace("_", "-")


@dataclass(frozen=True)
class JobSeries:
    """What the job page's charts show, read from the job tables: a page rendered by a report worker (which
    has no connection) is given these."""

    steps: list[dict]
    ranks: list[dict]
    links: list[dict]
    stages: list[dict]


def read_job_series(con: duckdb.DuckDBPyConnection, job_id: str) -> JobSeries:
    """The job page's series of ``job_id`` read from ``con``."""
    return JobSeries(
        job_rows(con, _STEPS, job_id),
        rank_metrics(con, job_id, job_id).to_pylist(),
        job_rows(con, _LINKS, job_id),
        job_rows(con, _STAGES, job_id),
    )


def render_job_page(d: Diagnosis, con: duckdb.DuckDBPyConnection | JobSeries, plotly_src: str | None = None) -> str:
    """The job page as a string: deterministic (fixed div ids, ordered queries), offline; plotly.js
    inlined, or loaded from ``plotly_src`` (a file shared by the pages of one output folder). ``con`` is the
    connection, or the series already read from it (``read_job_series``)."""
    rank_step, wait_transit, links, stage_chart = JOB_CHARTS
    read = con if isinstance(con, JobSeries) else read_job_series(con, d.run_id)
    steps = read.steps
    figures = {
        rank_step: job_charts.rank_step_heatmap(steps),
        wait_transit: job_charts.wait_transit_bars(read.ranks),
        links: job_charts.link_bandwidth_figure(read.links, {r["rank"] for r in d.run.get("ranks") or []} or None),
    }
    if len(read.stages) >= 2:
        figures[stage_chart] = job_charts.stage_bars(read.stages)

    def chart_for(index: int, finding: Finding, draw: bool) -> tuple[str, bool]:
        """A link to the chart the finding's rule names: the job charts are drawn below, once."""
        key = d.rule_reports.get(finding.rule, ReportSpec()).chart
        if key not in figures:
            return "", False
        return chart_link(_div(key), chart_title(figures[key]), "in Charts below"), False

    charts = "".join(f'<div class="chart">{figure_html(fig, _div(key))}</div>' for key, fig in figures.items())
    body = (
        f"{page_title(d, f'Job {d.run_id}')}\n{verdict_section(page_order(d), job_step_breakdown(steps), True)}\n"
        f"{findings_section(d, chart_for)}\n"
        f'<section id="charts"><h2>Charts</h2>{charts}</section>\n{_about(d)}\n{problems_section(d)}'
    )
    return report_page(f"npu-triage job: {d.run_id}", body, plotly_src)
