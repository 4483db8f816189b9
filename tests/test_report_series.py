"""Chart series from small hand-built normalized tables and the rules' helper relations."""

from __future__ import annotations

import pytest

from analyzer.ingest.database import append_rows
from analyzer.report import runs_reader, series
from analyzer.rule_engine.views import create_views

T0 = 1_700_000_000_000_000_000


def _add_ops(con, rows):
    """rows: (op_name, op_type, task_type, start_us, dur_us[, core, cube, vector, scalar, mte])."""
    for row in rows:
        name, op_type, task_type, start_us, dur_us, *pipes = row
        core, cube, vector, scalar, mte = pipes or (None,) * 5
        start = T0 + int(start_us * 1000)
        append_rows(
            con,
            "ops",
            "SELECT * FROM (VALUES ('r', ?, ?, ?, ?::BIGINT, ?::DOUBLE, ?::BIGINT, ?::DOUBLE, ?::DOUBLE, ?::DOUBLE, "
            "?::DOUBLE, ?::DOUBLE)) v(run_id, op_name, op_type, task_type, start_ns, dur_us, end_ns, core_time_us, "
            "cube_time_us, vector_time_us, scalar_time_us, mte_time_us)",
            [
                name,
                op_type,
                task_type,
                start,
                dur_us,
                start + int(dur_us * 1000),
                core,
                cube,
                vector,
                scalar,
                mte,
            ],
        )


def test_busy_over_time_overlapping_tasks_counts_union_per_bucket(con):
    _add_ops(
        con,
        [
            ("a", "A", "AI_CORE", 0, 10),
            ("b", "B", "AI_VECTOR_CORE", 5, 10),
            ("c", "H", "HCCL", 15, 5),
        ],
    )
    create_views(con)
    busy = series.busy_over_time(con, "r", bucket_count=2)
    assert busy["busy_pct"].to_list() == [100.0, 50.0]
    assert busy["offset_ms"].to_list() == [0.0, 0.01]


def test_busy_over_time_long_task_spans_buckets_nested_task_not_double_counted(con):
    _add_ops(
        con,
        [
            ("a", "A", "AI_CORE", 0, 40),
            ("b", "B", "AI_CORE", 5, 5),
            ("c", "C", "MIX_AIV", 35, 10),
            ("h", "H", "HCCL", 45, 35),
        ],
    )
    create_views(con)
    busy = series.busy_over_time(con, "r", bucket_count=8)
    assert busy["busy_pct"].to_list() == [100.0, 100.0, 100.0, 100.0, 50.0, 0.0, 0.0, 0.0]


def test_idle_stretches_leading_and_trailing_idle_are_found(con):
    _add_ops(con, [("h", "H", "HCCL", 0, 5), ("a", "A", "AI_CORE", 5, 1), ("z", "H", "HCCL", 6, 4)])
    create_views(con)
    assert series.idle_stretches(con, "r", min_share=0.1).rows() == [
        (0.0, 0.005, 5.0),
        (0.006, 0.01, 4.0),
    ]


def test_busy_over_time_no_compute_tasks_is_empty(con):
    _add_ops(con, [("c", "H", "HCCL", 0, 5)])
    create_views(con)
    assert series.busy_over_time(con, "r").is_empty()
    assert series.idle_stretches(con, "r").is_empty()


def test_idle_stretches_long_gap_between_compute_is_found(con):
    _add_ops(con, [("a", "A", "AI_CORE", 0, 1), ("b", "B", "MIX_AIC", 9, 1), ("c", "H", "HCCL", 2, 1)])
    create_views(con)
    idle = series.idle_stretches(con, "r", min_share=0.1)
    assert idle.rows() == [(0.001, 0.009, 8.0)]


def test_op_type_pareto_ranks_by_total_time_with_cumulative_share(con):
    _add_ops(
        con,
        [
            ("a1", "A", "AI_CORE", 0, 1),
            ("a2", "A", "AI_CORE", 2, 1),
            ("b", "B", "AI_CORE", 4, 6),
            ("x", None, "AI_CPU", 20, 2),
        ],
    )
    create_views(con)
    pareto = series.op_type_pareto(con, "r", top_n=2)
    assert pareto["op_type"].to_list() == ["B", "A"]
    assert pareto["call_count"].to_list() == [1, 2]
    assert pareto["cumulative_share"].to_list() == [0.6, 0.8]


def test_op_type_charts_count_compute_tasks_only(con):
    """Communication tasks are not compute to the rules (_compute_tasks), nor to op-type charts."""
    _add_ops(
        con,
        [("mm", "MatMulV2", "AI_CORE", 0, 10), ("nz", "NonZero", "AI_CPU", 20, 4)]
        + [(f"ar{i}", "allreduce", "HCCL", 30 + i * 40, 30) for i in range(3)]
        + [("k", None, None, 200, 5), ("c", "broadcast", "COMMUNICATION", 210, 50)],
    )
    create_views(con)
    pareto = series.op_type_pareto(con, "r")
    assert pareto.select("op_type", "call_count", "total_us").rows() == [
        ("MatMulV2", 1, 10.0),
        ("k", 1, 5.0),
        ("NonZero", 1, 4.0),
    ]
    assert pareto["cumulative_share"].to_list()[-1] == 1.0
    calls = series.op_type_calls(con, "r")
    assert set(calls["op_type"]) == {"MatMulV2", "k", "NonZero"}


def test_op_type_calls_marks_the_given_hotspots_only(con):
    _add_ops(
        con,
        [(f"t{i}", "Tiny", "AI_CORE", i * 2, 1) for i in range(10)] + [("big", "Big", "AI_CORE", 30, 9)],
    )
    create_views(con)
    calls = series.op_type_calls(con, "r")
    assert not any(calls["hotspot"])
    calls = series.op_type_calls(con, "r", hotspots={"Big"})
    assert dict(zip(calls["op_type"], calls["hotspot"], strict=True)) == {
        "Tiny": False,
        "Big": True,
    }


def test_pipeline_breakdown_shares_of_core_time(con):
    _add_ops(
        con,
        [
            ("m", "MatMul", "AI_CORE", 0, 10, 10.0, 5.0, 0.0, 1.0, 6.0),
            ("n", "Add", "AI_VECTOR_CORE", 20, 1),
        ],
    )
    pipe = series.pipeline_breakdown(con, "r")
    assert pipe.rows() == [("MatMul", 10.0, 0.5, 0.0, 0.1, 0.6)]


def test_pipeline_breakdown_without_pmu_is_empty(con):
    _add_ops(con, [("n", "Add", "AI_VECTOR_CORE", 0, 1)])
    assert series.pipeline_breakdown(con, "r").is_empty()


def test_gap_histogram_and_positions_locate_gaps(con):
    _add_ops(
        con,
        [
            ("a", "A", "AI_CORE", 0, 10),
            ("b", "B", "AI_CORE", 2, 3),
            ("c", "C", "AI_CORE", 11, 1),
            ("d", "D", "AI_CORE", 1012, 1),
        ],
    )
    create_views(con)
    hist = series.gap_histogram(con, "r", bins_per_decade=1)
    assert hist.select("bin", "gap_count", "total_gap_us").rows() == [(0, 1, 1.0), (3, 1, 1000.0)]
    positions = series.gap_positions(con, "r", limit=1)
    assert positions.rows() == [(0.012, 1000.0, "c", "d")]


def test_longest_gaps_of_a_chunk_of_runs_are_those_of_each_run_alone_when_the_limit_cuts_through_ties(con):
    """A page reader's longest gaps (one query for a chunk of runs, ranking only each run's gaps as long as its
    limit-th longest) are those each run's own query gives, ties at the cut broken the same way."""
    gaps = {"r": [5, 3, 3, 3, 1, 3], "s": [2, 7, 7]}  # idle us before each task of the run
    for run, before in gaps.items():
        at, rows = 0, []
        for i, idle in enumerate(before):
            at += idle
            rows.append((f"{run}{i}", "A", "AI_CORE", at, 1))
            at += 1
        _add_ops(con, rows)
        con.execute("UPDATE ops SET run_id = ? WHERE run_id = 'r' AND op_name LIKE ?", [run, f"{run}%"])
    create_views(con)
    reader = runs_reader.RunsReader(con, ["r", "s"])
    for limit in (1, 2, 3, 4, 9):
        for run in ("r", "s"):
            alone = series.gap_positions(con, run, limit=limit)
            assert alone.height == min(limit, len(gaps[run]) - 1)
            assert series.gap_positions(reader, run, limit=limit).equals(alone), (run, limit)
    # the cut falls among r's four 3 us gaps: the earliest are kept
    assert series.gap_positions(con, "r", limit=3)["before_op"].to_list() == ["r0", "r1", "r2"]


def test_step_breakdown_and_hbm_read_their_tables(con):
    _add_ops(con, [("a", "A", "AI_CORE", 0, 10)])
    con.execute(
        "INSERT INTO steps (run_id, step_id, computing_us, comm_not_overlapped_us, free_us, stage_us) "
        "VALUES ('r', 2, 5, 3, 1, 9), ('r', 1, 4, NULL, 2, 6)"
    )
    con.execute(
        "INSERT INTO counters (run_id, counter, instance, ts_ns, value, unit) VALUES "
        f"('r', 'hbm_read', '0', {T0}, 100, 'MB/s'), ('r', 'hbm_read', '1', {T0}, 50, 'MB/s'), "
        f"('r', 'hbm_write', '0', {T0 + 1000}, 7, 'MB/s')"
    )
    create_views(con)
    steps = series.step_breakdown(con, "r")
    assert steps["step_id"].to_list() == [1, 2]
    assert steps["label"].to_list() == ["step 1", "step 2"]
    assert steps.select("computing_us", "comm_not_overlapped_us").rows() == [(4.0, 0.0), (5.0, 3.0)]
    parts = steps.drop("step_id", "label").sum_horizontal().to_list()
    assert parts == pytest.approx([6.0, 9.0])  # the parts add up to each step
    hbm = series.hbm_bandwidth(con, "r", bucket_count=1001)
    assert hbm.rows() == [("hbm_read", 0.0, 150.0), ("hbm_write", 0.001, 7.0)]
    assert series.hbm_bandwidth(con, "other").is_empty()


def test_busy_and_gap_series_equal_the_rules_relations_with_aicpu_and_untyped_tasks(con):
    """AI_CPU and untyped tasks are compute to the rules (_compute_tasks): so to the charts."""
    _add_ops(
        con,
        [
            ("mm", "MatMulV2", "AI_CORE", 0, 10),
            ("nz", "NonZero", "AI_CPU", 20, 10),
            ("k", None, None, 40, 5),
            ("ar", "allreduce", "HCCL", 50, 10),
            ("add", "Add", "AI_VECTOR_CORE", 70, 10),
        ],
    )
    create_views(con)
    rows = con.execute("SELECT span_us, busy_us FROM _run_busy WHERE run_id = 'r'").fetchall()
    span_us, busy_us = rows[0]
    assert busy_us == 35.0  # 10 + 10 + 5 + 10: AI_CORE, AI_CPU, untyped, AI_VECTOR_CORE
    busy = series.busy_over_time(con, "r", bucket_count=80)  # 1 us buckets
    chart_busy_us = sum(r["busy_pct"] * r["width_ms"] * 10 for r in busy.iter_rows(named=True))
    assert chart_busy_us == busy_us
    idle = series.idle_stretches(con, "r", min_share=0.0)
    assert sum(idle["idle_us"]) == span_us - busy_us
    gaps = con.execute("SELECT sum(gap_us) FROM _device_gaps WHERE run_id = 'r'").fetchall()
    assert sum(series.gap_histogram(con, "r")["total_gap_us"]) == gaps[0][0] == 35.0
    assert sum(series.gap_positions(con, "r")["gap_us"]) == gaps[0][0]
