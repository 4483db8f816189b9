"""The compute-busy series and idle stretches of many run pages made with numpy (report/busy_series.py) are the rows
DuckDB's queries give (series.busy_over_time, series.idle_stretches), to the last bit, on runs of other shapes than
the examples'."""

from __future__ import annotations

import numpy as np
import pytest

from analyzer.ingest.database import append_rows
from analyzer.report import busy_series, runs_reader, series
from analyzer.rule_engine.views import create_views

T0 = 1_700_000_000_000_000_000
TYPES = ("AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "HCCL")  # HCCL: not a compute task, never busy


def _add_runs(con, seed: int) -> list[str]:
    """Runs of random tasks: overlapping, nested, some spanning many buckets, odd spans; a run with communication
    only (no busy row) and a run of one instant (no window)."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(12):
        count = int(rng.integers(1, 300))
        span = int(rng.choice([999, 10**6 + 7, 3 * 10**9 + 1]))
        starts = rng.integers(0, span, count)
        durations = np.where(
            rng.random(count) < 0.05, rng.integers(0, span, count), rng.integers(0, span // 50 + 2, count)
        )
        kinds = rng.choice(TYPES, count)
        rows += [
            (f"run{r}", str(k), int(T0 + s), int(T0 + s + d)) for k, s, d in zip(kinds, starts, durations, strict=True)
        ]
    rows += [("comm_only", "HCCL", T0, T0 + 5000), ("instant", "AI_CORE", T0, T0)]
    append_rows(
        con,
        "ops",
        "SELECT run_id, 'op' AS op_name, task_type AS op_type, task_type, start_ns, end_ns, "
        "(end_ns - start_ns) / 1e3 AS dur_us FROM (SELECT unnest($r) AS run_id, unnest($k) AS task_type, "
        "unnest($s) AS start_ns, unnest($e) AS end_ns)",
        {"r": [r[0] for r in rows], "k": [r[1] for r in rows], "s": [r[2] for r in rows], "e": [r[3] for r in rows]},
    )
    create_views(con)
    return sorted({r[0] for r in rows})


def _rows(frame) -> str:
    return repr((frame.schema, frame.to_dict(as_series=False)))  # repr: every float's bits compared


def _pages(con, runs: list[str], buckets: int, chunk: int) -> dict[str, str]:
    reader = runs_reader.RunsReader(con, runs, chunk)
    return {run: _rows(series.busy_over_time(reader, run, bucket_count=buckets)) for run in runs}


@pytest.mark.parametrize(
    ("seed", "buckets", "chunk"),
    [
        (3, 1000, 5),
        pytest.param(41, 7, 256, marks=pytest.mark.slow),
        pytest.param(97, 1, 4, marks=pytest.mark.slow),
    ],
)
@pytest.mark.slow
def test_numpy_busy_rows_are_the_query_rows(con, monkeypatch, seed, buckets, chunk):
    runs = _add_runs(con, seed)
    assert busy_series.busy_parts(con, runs, buckets) is not None  # made by numpy, not left to the query
    made = _pages(con, runs, buckets, chunk)
    assert sum(1 for run in runs if "[]" not in made[run]) == 12  # the communication-only and instant runs: none
    monkeypatch.setattr(busy_series, "busy_parts", lambda *args, **kwargs: None)  # the chunk's query
    assert made == _pages(con, runs, buckets, chunk)
    for run in runs[:3]:  # and a page read alone, by its own query
        alone = series.busy_over_time(con, run, bucket_count=buckets)
        assert made[run] == _rows(alone) or alone.is_empty()


def _idle_pages(con, runs: list[str], share: float, limit: int, chunk: int) -> dict[str, str]:
    reader = runs_reader.RunsReader(con, runs, chunk)
    return {run: _rows(series.idle_stretches(reader, run, share, limit)) for run in runs}


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "share", "limit"), [(5, 0.01, 200), (8, 0.0, 3), (13, 0.0005, 40)])
def test_numpy_idle_rows_are_the_query_rows(con, monkeypatch, seed, share, limit):
    runs = _add_runs(con, seed)
    assert busy_series.idle_parts(con, runs, share, limit) is not None  # made by numpy, not left to the query
    made = _idle_pages(con, runs, share, limit, 5)
    assert sum(1 for run in runs if "[]" not in made[run]) >= 4  # runs with stretches, not only empty pages
    monkeypatch.setattr(busy_series, "idle_parts", lambda *args, **kwargs: None)  # the chunk's query
    assert made == _idle_pages(con, runs, share, limit, 5)
    for run in runs[:3]:  # and a page read alone, by its own query
        alone = series.idle_stretches(con, run, share, limit)
        assert made[run] == _rows(alone) or alone.is_empty()


def test_a_chunk_beyond_exact_doubles_is_left_to_the_query(con):
    day_ns = 86_400 * 10**9
    append_rows(
        con,
        "ops",
        "SELECT 'long' AS run_id, 'op' AS op_name, 'AI_CORE' AS task_type, ?::BIGINT AS start_ns, ?::BIGINT AS end_ns",
        [T0, T0 + 200 * day_ns],  # buckets of 17 days: 1000 * busy_ns passes 2 ** 53
    )
    create_views(con)
    assert busy_series.busy_parts(con, ["long"], 1000) is None
    reader = runs_reader.RunsReader(con, ["long"])
    assert _rows(series.busy_over_time(reader, "long")) == _rows(series.busy_over_time(con, "long"))
