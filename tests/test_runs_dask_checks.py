"""A running Dask cluster checked before a batch starts: a port that is no Dask scheduler, a scheduler without
workers, workers that cannot import npu-triage each end at once with a named error (exit 2), never a hang.

Real processes on 127.0.0.1: a listening socket that never speaks, a `dask scheduler`, a `dask worker` whose
Python cannot import the package. The checks' time limits are shortened here; their defaults are checked
to end within 60 s in all.
"""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.runs import dask_executor
from tests.real_process_fixtures import GROUP, NEEDS_DASK, _scheduler_address, start_logged, stop_session
from tests.tiny_exports import write_tiny_export

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(GROUP), NEEDS_DASK]

# A worker's Python without the package: the editable install's finder and the checkout left off its path.
_WITHOUT_PACKAGE = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f)]
sys.path[:] = [p for p in sys.path if p.rstrip("/") not in ({root!r}, "")]
sys.argv = ["dask-worker", {address!r}, "--no-nanny", "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"]
from distributed.cli.dask_worker import main
main()
"""


@pytest.fixture
def quick(monkeypatch):
    for name, seconds in (("CONNECT_S", 2), ("WORKERS_S", 3), ("IMPORT_S", 10)):
        monkeypatch.setattr(dask_executor, name, seconds)


def _batch(tmp_path: Path, address: str, capsys) -> tuple[int, str, float]:
    write_tiny_export(tmp_path / "runs" / "r1", seed=3, steps=5)
    start = time.monotonic()
    code = main(["batch", str(tmp_path / "runs"), "--catalog", str(tmp_path / "c.duckdb"), "--scheduler", address,
                 "--executor", "dask"])  # fmt: skip
    assert not (tmp_path / "c.duckdb").exists()
    return code, capsys.readouterr().err, time.monotonic() - start


def test_dask_checks_end_within_a_minute_by_default():
    d = dask_executor
    assert 2 * d.CONNECT_S + d.WORKERS_S + d.IMPORT_S < 60  # handshake, connect, a worker, the import check


def test_dask_scheduler_address_of_a_server_that_is_not_dask_is_named(tmp_path, capsys, quick):
    with socket.socket() as server:  # listening (the kernel accepts connections), never answering
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        code, err, took = _batch(tmp_path, address, capsys)
    assert code == 2 and took < 10
    assert f"{address} is not a Dask scheduler" in err and "Traceback" not in err


def test_dask_cluster_without_workers_then_with_workers_lacking_the_package_is_named(tmp_path, capsys, quick):
    bin_dir = Path(sys.executable).parent
    scheduler = start_logged(
        [str(bin_dir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
         "--scheduler-file", str(tmp_path / "s.json")],
        tmp_path / "scheduler.log",
    )  # fmt: skip
    worker = None
    try:
        address = _scheduler_address(tmp_path / "s.json", tmp_path / "scheduler.log")
        code, err, took = _batch(tmp_path / "empty", address, capsys)
        assert code == 2 and took < 15
        assert f"the Dask cluster at {address} has no worker" in err
        root = str(Path(__file__).resolve().parents[1])
        script = _WITHOUT_PACKAGE.format(root=root, address=address)
        worker = start_logged([sys.executable, "-c", script], tmp_path / "worker.log")
        code, err, took = _batch(tmp_path / "unfit", address, capsys)
        assert code == 2 and took < 25, (tmp_path / "worker.log").read_text()
        assert "1 of the 1 worker(s) of the Dask cluster" in err
        assert "cannot import npu-triage: ModuleNotFoundError" in err and "Traceback" not in err
    finally:
        for proc in (worker, scheduler):
            if proc is not None:
                stop_session(proc)
