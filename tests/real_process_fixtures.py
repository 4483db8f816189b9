"""Shared real processes and inputs: a Dask cluster started as the README starts one, and a tree of
exports big enough that a batch is still at work when a test stops it.

The tree is built once per test session (the hard-stop and Dask modules all use it), so every module using
these runs on one pytest-xdist worker (their ``xdist_group`` mark, see tests/conftest.py). The cluster
is shared by consecutive modules using it and stopped after them (``SharedCluster``).
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


class SharedCluster:
    """A scheduler and a worker command of 2 worker processes, as the README starts them, on 127.0.0.1: started
    when a test first asks for it, stopped once the next test's module uses none (``stop_unless_needed``).

    Consecutive modules using it share one (the Dask modules run one after another in their xdist group): each
    start costs a scheduler, two nannies and two workers importing distributed. Stopped between modules that
    do not use it: an idle scheduler and its workers keep polling (heartbeats, memory monitors) and would take
    CPU from every test that runs after their modules on that worker. A test that kills a worker waits for the
    nanny to restart it, so every test finds 2 workers."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory, modules: frozenset[str]) -> None:
        self._tmp_path_factory = tmp_path_factory
        self.modules = modules  # the modules whose tests use it
        self._procs: list[subprocess.Popen] = []
        self._client = None
        self._address = ""

    def get(self) -> tuple[str, object]:
        """(address, distributed.Client), starting the cluster when it is not running."""
        if self._client is None:
            self._start()
        return self._address, self._client

    def _start(self) -> None:
        distributed = pytest.importorskip("distributed", reason="needs the dask extra: pip install 'npu-triage[dask]'")
        tmp = self._tmp_path_factory.mktemp("cluster")
        bin_dir = Path(sys.executable).parent
        try:
            self._procs.append(
                start_logged(
                    [str(bin_dir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                     "--dashboard-address", "127.0.0.1:0",
                     "--scheduler-file", str(tmp / "scheduler.json")],
                    tmp / "scheduler.log",
                )
            )  # fmt: skip
            address = _scheduler_address(tmp / "scheduler.json", tmp / "scheduler.log")
            self._procs.append(
                start_logged(
                    [str(bin_dir / "dask"), "worker", address, "--nworkers", "2", "--nthreads", "1",
                     "--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"],
                    tmp / "worker.log",
                )
            )  # fmt: skip
            self._client = distributed.Client(address, timeout="30s")
            self._client.wait_for_workers(2, timeout=90)
            self._address = address
        except BaseException:
            self.stop()
            raise

    def stop_unless_needed(self, next_item: pytest.Item | None) -> None:
        """Stopped unless the next test's module uses it."""
        module = getattr(next_item, "module", None)  # a doctest item has none
        if module is None or module.__name__ not in self.modules:
            self.stop()

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        for proc in reversed(self._procs):
            stop_session(proc)
        self._procs.clear()


SHARED_CLUSTER = pytest.StashKey[SharedCluster]()  # the session's, for the hook that stops it between modules


def cluster_modules(items: list[pytest.Item]) -> frozenset[str]:
    """The modules of the tests using the ``cluster`` fixture."""
    return frozenset(item.module.__name__ for item in items if "cluster" in getattr(item, "fixturenames", ()))


@pytest.fixture(scope="session")
def shared_cluster(request: pytest.FixtureRequest, tmp_path_factory):
    """The session's SharedCluster, known to the hook that stops it between modules (tests/conftest.py)."""
    keeper = SharedCluster(tmp_path_factory, cluster_modules(request.session.items))
    request.config.stash[SHARED_CLUSTER] = keeper
    yield keeper
    keeper.stop()


@pytest.fixture
def cluster(shared_cluster: SharedCluster):
    """The running cluster's (address, distributed.Client)."""
    return shared_cluster.get()
