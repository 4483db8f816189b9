"""Hard stops of a batch on Dask, with real processes and signals: its own local cluster, and a user's running one.

On its own local cluster a stopped batch ends the whole of it (scheduler, nannies, worker
processes, resource tracker) and removes its temporary files; a killed one (kill -9) leaves
workers that exit within seconds and files that the next batch removes. On a user's cluster
(--scheduler) a stop cancels the batch's work and leaves the cluster running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.real_process_fixtures import GROUP, NEEDS_DASK
from tests.test_hard_stops import TRACEBACK, _live_group, _wait_for

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(GROUP), NEEDS_DASK]  # big_tree (the session's) and cluster


def _start_batch(tree: Path, tmp_path: Path, *executor: str) -> tuple[subprocess.Popen, Path]:
    """A batch in a session of its own, once a worker analyses an export (its DuckDB spill folder exists)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    cmd = [sys.executable, "-m", "analyzer", "batch", str(tree), "--catalog", str(tmp_path / "c.duckdb")]
    proc = subprocess.Popen(
        [*cmd, "--jobs", "2", "--no-diagnose", "--executor", "dask", *executor],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(scratch)},
        start_new_session=True,
    )
    return proc, scratch


def _wait_at_work(proc: subprocess.Popen, scratch: Path) -> None:
    def spilling() -> bool:
        assert proc.poll() is None, proc.communicate()[1]
        return bool(list(scratch.rglob("npu-triage-spill-*")))

    _wait_for(spilling, 90, "a local Dask worker analyses an export")


@pytest.mark.parametrize(("how", "code"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_dask_batch_stopped_ends_its_local_cluster_and_removes_its_files(how, code, big_tree, tmp_path):
    proc, scratch = _start_batch(big_tree, tmp_path)
    try:
        _wait_at_work(proc, scratch)
        assert len(_live_group(proc.pid)) >= 4, _live_group(proc.pid)  # driver, resource tracker, 2 workers
        if how == "SIGTERM":
            os.kill(proc.pid, signal.SIGTERM)  # `kill PID`
        else:
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole foreground group, workers too
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == code, err
        assert TRACEBACK not in err and "internal error" not in err, err
        assert ("terminated" if how == "SIGTERM" else "interrupted") in err
        _wait_for(lambda: not _live_group(proc.pid), 10, f"the cluster ends: {_live_group(proc.pid)}")
        assert not list(scratch.iterdir()), "temporary files left behind"
    finally:
        if _live_group(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)


def test_dask_batch_stopped_while_its_local_cluster_starts_ends_it(big_tree, tmp_path):
    proc, scratch = _start_batch(big_tree, tmp_path)
    try:
        # the resource tracker and a first worker process: the cluster is starting, not yet at work
        _wait_for(lambda: len(_live_group(proc.pid)) >= 3 or proc.poll() is not None, 60, "the cluster starts")
        assert not list(scratch.rglob("npu-triage-spill-*")), "too late: a worker is at work already"
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 143, err
        assert TRACEBACK not in err and "internal error" not in err, err
        _wait_for(lambda: not _live_group(proc.pid), 10, f"the cluster ends: {_live_group(proc.pid)}")
        assert not list(scratch.iterdir()), "temporary files left behind"
    finally:
        if _live_group(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)


def test_dask_batch_killed_leaves_workers_that_exit_and_files_the_next_batch_removes(big_tree, tmp_path):
    proc, scratch = _start_batch(big_tree, tmp_path)
    try:
        _wait_at_work(proc, scratch)
        os.kill(proc.pid, signal.SIGKILL)  # the driver only: its workers must notice
        proc.communicate(timeout=30)
        _wait_for(lambda: not _live_group(proc.pid), 10, f"the workers notice: {_live_group(proc.pid)}")
    finally:
        if _live_group(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
    assert list(scratch.glob("npu-triage-batch-*/dask-scratch-space")), "a killed batch cannot remove its files"
    (tmp_path / "empty").mkdir()
    again = subprocess.run(
        [sys.executable, "-m", "analyzer", "batch", str(tmp_path / "empty"), "--catalog", str(tmp_path / "d.duckdb")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(scratch)},
        timeout=120,
    )
    assert again.returncode == 2, again.stderr
    assert not list(scratch.iterdir()), "the next batch removes what a killed one left"


def _tasks_on(client) -> int:
    return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))


@pytest.mark.parametrize(("how", "code"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_dask_batch_stopped_on_a_running_cluster_cancels_its_work_and_leaves_the_cluster(
    how, code, big_tree, cluster, tmp_path
):
    address, client = cluster
    proc, scratch = _start_batch(big_tree, tmp_path, "--scheduler", address)
    try:
        _wait_for(lambda: any(client.processing().values()), 90, "the cluster runs the batch's work")
        time.sleep(0.5)
        (os.kill if how == "SIGTERM" else os.killpg)(proc.pid, getattr(signal, how))
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == code, err
        assert TRACEBACK not in err and "internal error" not in err, err
        _wait_for(lambda: not _live_group(proc.pid), 10, f"the driver ends: {_live_group(proc.pid)}")
    finally:
        if _live_group(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
    assert not list(scratch.iterdir()), "temporary files left behind"
    _wait_for(lambda: _tasks_on(client) == 0, 30, "the scheduler forgets the batch's tasks")
    assert len(client.scheduler_info()["workers"]) == 2, "the user's cluster keeps its workers"
    assert client.submit(sum, [1, 2], pure=False).result(timeout=60) == 3, "the user's cluster still works"
