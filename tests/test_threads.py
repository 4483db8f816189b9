"""DuckDB's threads: DuckDB's default, or one count per process set by option or environment; a batch's
workers share the cores; a small export without a count set is read on one."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pytest

from analyzer.api import load
from analyzer.cli import main
from analyzer.duckdb_connect import connect_offline
from analyzer.execution.threads import (
    ENV,
    SMALL_INPUT_BYTES,
    ThreadCountError,
    small_input_threads,
    thread_count,
    worker_thread_count,
)
from analyzer.ingest.database import connect
from analyzer.runs.executor import LocalPool

CORES = os.cpu_count() or 1
SMALL_EXPORT = Path(__file__).parent.parent / "fixtures" / "examples" / "resnet_host_sync"


def _threads(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute("SELECT current_setting('threads')").fetchall()[0][0]


def _worker_threads(item: int) -> int:
    """Run in a worker process: the thread count of a connection opened there."""
    return _threads(connect_offline())


def test_without_a_count_duckdb_keeps_its_default(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert thread_count() is None
    assert _threads(connect()) == _threads(duckdb.connect())


def test_the_option_wins_over_the_environment_and_every_connection_uses_it(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV, "1")
    assert thread_count() == 1 and thread_count("2") == min(2, CORES)
    assert _threads(connect()) == 1
    assert _threads(connect_offline(str(tmp_path / "catalog.duckdb"))) == 1


@pytest.mark.parametrize("text", ["0", "-2", "many", "1.5", ""])
def test_a_bad_count_names_where_it_came_from(monkeypatch, text):
    with pytest.raises(ThreadCountError, match="--threads"):
        thread_count(text)
    if text:
        monkeypatch.setenv(ENV, text)
        with pytest.raises(ThreadCountError, match=ENV):
            thread_count()


def test_cli_rejects_a_bad_count_before_any_work(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    out = tmp_path / "out"
    assert main(["diagnose", str(tmp_path), "--out", str(out), "--threads", "0"]) == 2
    err = capsys.readouterr().err
    assert "--threads: '0' is not a thread count" in err and "Traceback" not in err
    assert not out.exists()
    monkeypatch.setenv(ENV, "lots")
    assert main(["rules", "list"]) == 2
    assert f"{ENV}: 'lots' is not a thread count" in capsys.readouterr().err


def test_cli_option_sets_the_count_of_the_process_and_its_workers(monkeypatch, capsys):
    monkeypatch.setenv(ENV, "3")  # restored after the test: main() passes the option on in the environment
    assert main(["--threads", "1", "rules", "list"]) == 0
    assert os.environ[ENV] == "1" and _threads(connect()) == 1
    assert main(["schema", "--threads", "2"]) == 0
    assert os.environ[ENV] == str(min(2, CORES))


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_pool_workers_share_the_cores_unless_a_count_is_set(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    got = dict(LocalPool(2).completed(_worker_threads, [0, 1]))
    assert got == {0: max(1, CORES // 2), 1: max(1, CORES // 2)} == {i: worker_thread_count(2) for i in (0, 1)}
    monkeypatch.setenv(ENV, "1")
    assert dict(LocalPool(2).completed(_worker_threads, [0])) == {0: 1}


def test_a_count_above_the_cores_is_capped_with_a_note(monkeypatch, capsys):
    """--threads 100000 once started so many threads that the process could not end."""
    monkeypatch.setenv(ENV, "100000")
    assert thread_count() == CORES and _threads(connect()) == CORES
    assert main(["--threads", "100000", "rules", "list"]) == 0
    assert os.environ[ENV] == str(CORES) and _threads(connect()) == CORES
    assert f"--threads 100000 is more than this machine's {CORES} cores: {CORES} threads are used" in (
        capsys.readouterr().err
    )


@pytest.mark.slow
def test_local_dask_cluster_workers_share_the_cores(monkeypatch):
    pytest.importorskip("distributed", reason="needs the dask extra: pip install 'npu-triage[dask]'")
    from analyzer.runs.dask_executor import DaskExecutor

    monkeypatch.delenv(ENV, raising=False)
    notes = []
    with DaskExecutor(None, 6, note=notes.append) as executor:  # --jobs 6, 2 items: 2 workers
        got = dict(executor.completed(_worker_threads, [0, 1]))
        assert len(executor.cluster.workers) == 2
    assert got == {0: max(1, CORES // 2), 1: max(1, CORES // 2)}
    assert notes == ["--jobs 6 is more than the 2 exports to analyse: 2 Dask workers"]


def test_a_small_export_without_a_count_is_read_and_judged_on_one_thread(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert small_input_threads(SMALL_EXPORT) == 1
    with load(SMALL_EXPORT, logs=False) as trace:
        assert _threads(trace.con) == 1
    monkeypatch.setenv(ENV, str(CORES))  # a count set wins
    assert small_input_threads(SMALL_EXPORT) is None
    with load(SMALL_EXPORT, logs=False) as trace:
        assert _threads(trace.con) == CORES


def test_an_export_of_the_small_size_or_more_keeps_the_count_in_force(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV, raising=False)
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "kernel_details.csv").write_bytes(b"x" * (SMALL_INPUT_BYTES - 1))
    assert small_input_threads(tmp_path) == 1
    (tmp_path / "a" / "op_summary.csv").write_bytes(b"x")
    assert small_input_threads(tmp_path) is None
    assert small_input_threads(tmp_path / "a" / "op_summary.csv") == 1
    assert small_input_threads(tmp_path / "missing") is None


def test_links_that_loop_or_lead_nowhere_are_stepped_over_when_an_input_is_sized(monkeypatch, tmp_path):
    """Sizing an input walks it before any reader runs: a link to itself (whose stat fails with 'too many levels
    of symbolic links'), a link to a missing file and a link back up the tree are no files of its, and raise
    nothing (the scan of the input is the one to name them)."""
    monkeypatch.delenv(ENV, raising=False)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "kernel_details.csv").write_bytes(b"x" * (SMALL_INPUT_BYTES - 1))
    (tmp_path / "self").symlink_to("self")
    (tmp_path / "gone").symlink_to(tmp_path / "missing.csv")
    (tmp_path / "a" / "up").symlink_to(tmp_path, target_is_directory=True)
    assert small_input_threads(tmp_path) == 1
    (tmp_path / "a" / "op_summary.csv").write_bytes(b"x")
    assert small_input_threads(tmp_path) is None
