"""What a job is read and judged with: DuckDB's job memory limit (job_ingest.JOB_MEMORY_BYTES) unless the user gave one,
and the helper tables built on the connection's threads before the job's one-thread queries."""

from __future__ import annotations

from pathlib import Path

import pytest

import analyzer
from analyzer.execution.memory import ENV, default_bytes, duckdb_setting
from analyzer.job.job_ingest import JOB_MEMORY_BYTES

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "examples"


def _limit(trace) -> str:
    """The limit in force, as DuckDB prints it (rounded)."""
    return trace.con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]


def _as_set(limit_bytes: int, trace) -> str:
    """The limit as DuckDB prints it back once set."""
    trace.con.execute("SET memory_limit = ?", [duckdb_setting(limit_bytes)])
    return trace.con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]


def test_a_job_is_read_under_the_job_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    with analyzer.load(EXAMPLES / "job_slow_rank", logs=False) as trace:
        assert trace.jobs
        seen = _limit(trace)
        assert seen == _as_set(min(default_bytes(), JOB_MEMORY_BYTES), trace)


def test_a_single_export_keeps_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    with analyzer.load(EXAMPLES / "resnet_host_sync", logs=False) as trace:
        assert not trace.jobs
        seen = _limit(trace)
        assert seen == _as_set(default_bytes(), trace)
        assert seen != _as_set(JOB_MEMORY_BYTES, trace)


@pytest.mark.parametrize("given", ["option", "environment"])
def test_a_limit_the_user_gives_wins(monkeypatch: pytest.MonkeyPatch, given: str) -> None:
    monkeypatch.delenv(ENV, raising=False)
    if given == "environment":
        monkeypatch.setenv(ENV, "3GiB")
    option = "3GiB" if given == "option" else None
    with analyzer.load(EXAMPLES / "job_slow_rank", logs=False, memory_limit=option) as trace:
        seen = _limit(trace)
        assert seen == _as_set(3 << 30, trace)


@pytest.mark.slow
def test_a_jobs_helper_tables_are_built_on_the_connections_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The job's rules run on one thread (job/fixed_order.py); the helper tables of all its ranks are built
    before that, on the connection's threads."""
    from analyzer.rule_engine import runner

    monkeypatch.setenv("NPU_TRIAGE_THREADS", "2")
    seen: list[int] = []
    build = runner.create_views

    def counting(con, *args) -> None:
        seen.append(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
        build(con, *args)

    monkeypatch.setattr(runner, "create_views", counting)
    with analyzer.load(EXAMPLES / "job_slow_rank", logs=False) as trace:
        assert list(analyzer.diagnose_jobs(trace))
    assert seen and seen[0] == 2
