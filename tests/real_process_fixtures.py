"""Shared real processes and inputs: a Dask cluster started as the README starts one, and a tree of
exports big enough that a batch is still at work when a test stops it.

The tree is built once per test session (the hard-stop and Dask modules all use it), so every module using
these runs on one pytest-xdist worker (their ``xdist_group`` mark, see tests/conftest.py). The cluster
lives for one module: an idle scheduler and its workers keep polling (heartbeats, memory monitors) and
would take CPU from every test that runs after their modules on that worker.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

GROUP = "real_processes"  # the xdist group of every module using these fixtures
# Skips a test without the dask extra. A mark, not a module-level importorskip: every pytest-xdist worker
# collects every module, and importing distributed there would cost each of them its import (fast loop too).
NEEDS_DASK = pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None, reason="needs the dask extra: pip install 'npu-triage[dask]'"
)


@pytest.fixture(scope="session")
def big_tree(tmp_path_factory) -> Path:
    """Four exports that each take a worker several seconds, one of them inside a zip (tests only read it)."""
    from fixtures.generator import write_export

    root = tmp_path_factory.mktemp("hard_stops") / "tree"
    for i in range(4):  # in this process: `python -m fixtures.generator large` would only add its start
        write_export("large", root / f"run{i}", seed=i, tasks=40000)
    with zipfile.ZipFile(root / "zipped.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for p in sorted((root / "run3").rglob("*")):
            zf.write(p, p.relative_to(root).as_posix())
    shutil.rmtree(root / "run3")
    return root


def start_logged(cmd: list[str], log: Path) -> subprocess.Popen:
    """``cmd`` in a session of its own, its output into ``log``."""
    with log.open("wb") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def stop_session(proc: subprocess.Popen) -> None:
    """The process and everything in its session: TERM, then KILL after 10 s."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _scheduler_address(scheduler_file: Path, log: Path, timeout: float = 60) -> str:
    """The address in the scheduler's file, once the file is there and whole."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return json.loads(scheduler_file.read_text())["address"]
        except (OSError, ValueError, KeyError):  # not there yet, or being written
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler and a worker command of 2 worker processes, as the README starts them, on 127.0.0.1.

    A test that kills a worker waits for the nanny to restart it, so every test finds 2 workers."""
    distributed = pytest.importorskip("distributed", reason="needs the dask extra: pip install 'npu-triage[dask]'")
    tmp = tmp_path_factory.mktemp("cluster")
    bin_dir = Path(sys.executable).parent
    procs = []
    client = None
    try:
        procs.append(
            start_logged(
                [str(bin_dir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                 "--dashboard-address", "127.0.0.1:0",
                 "--scheduler-file", str(tmp / "scheduler.json")],
                tmp / "scheduler.log",
            )
        )  # fmt: skip
        address = _scheduler_address(tmp / "scheduler.json", tmp / "scheduler.log")
        procs.append(
            start_logged(
                [str(bin_dir / "dask"), "worker", address, "--nworkers", "2", "--nthreads", "1",
                 "--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"],
                tmp / "worker.log",
            )
        )  # fmt: skip
        client = distributed.Client(address, timeout="30s")
        client.wait_for_workers(2, timeout=90)
        yield address, client
    finally:
        if client is not None:
            client.close()
        for proc in reversed(procs):
            stop_session(proc)
