"""Batch on a real Dask cluster (a `dask scheduler` and a `dask worker` of 2 processes on 127.0.0.1).

The catalog must equal the local pool's table by table; a worker killed mid-batch loses and
duplicates no run; a driver killed mid-batch leaves a catalog that a rerun completes, and no
worker process behind it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from analyzer.cli import main
from analyzer.runs.catalog_schema import CATALOG_TABLES
from tests.real_process_fixtures import GROUP, NEEDS_DASK, stop_session
from tests.tiny_exports import write_tiny_export

psutil = pytest.importorskip("psutil")

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(GROUP), NEEDS_DASK]  # with the other real-process modules

SCENARIOS = ["host_sync_low_util", "mte_bound_conv", "gappy_multistream", "call_count_hotspot"]
# Two tiny runs in each of three folders: every kind of input (plain folders in groups, scenarios with findings,
# a corrupt zip) is there, and after the 3 commits at which the driver-kill test strikes, the chunk of the
# scenarios is still to do, so the kill lands mid-batch. More runs would only repeat the same work.
TINY_RUNS = 6
RUNS = TINY_RUNS + len(SCENARIOS)


def _dump(catalog: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in CATALOG_TABLES}
    finally:
        con.close()


def _assert_same_catalog(got: Path, want: Path) -> None:
    a, b = _dump(got), _dump(want)
    for table in CATALOG_TABLES:
        assert a[table] == b[table], f"table {table} differs"


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    """TINY_RUNS tiny runs, four generated scenarios with findings, and a corrupt zip."""
    from fixtures.generator import write_export

    root = tmp_path_factory.mktemp("dask") / "archive"
    for i in range(TINY_RUNS):
        write_tiny_export(root / f"group{i % 3}" / f"run_{i:02d}", seed=i, steps=40)
    for i, scenario in enumerate(SCENARIOS):
        write_export(scenario, root / "scenarios" / scenario, seed=100 + i)
    (root / "corrupt.zip").write_bytes(b"PK\x03\x04 not really a zip")
    return root


@pytest.fixture(scope="module")
def pool_catalog(archive: Path) -> Path:
    """The reference: the same archive through the local process pool of 2."""
    catalog = archive.parent / "pool.duckdb"
    assert main(["batch", str(archive), "--catalog", str(catalog), "--jobs", "2"]) == 0
    return catalog


def test_dask_batch_on_a_running_cluster_equals_the_local_pool(archive, pool_catalog, cluster, capsys):
    address, _ = cluster
    catalog = archive.parent / "on-cluster.duckdb"
    args = ["batch", str(archive), "--catalog", str(catalog), "--executor", "dask", "--scheduler", address]
    assert main(args) == 0
    _assert_same_catalog(catalog, pool_catalog)
    assert len(_dump(catalog)["catalog_runs"]) == RUNS and _dump(catalog)["findings"]
    captured = capsys.readouterr()
    assert f"{RUNS} run(s) catalogued, 0 already in the catalog (skipped), 1 failure(s) recorded" in captured.out
    assert "failed: corrupt.zip:" in captured.err


def test_dask_batch_on_a_local_cluster_equals_the_local_pool_and_leaves_no_process(archive, pool_catalog):
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    catalog = archive.parent / "local-cluster.duckdb"
    assert main(["batch", str(archive), "--catalog", str(catalog), "--executor", "dask", "--jobs", "2"]) == 0
    _assert_same_catalog(catalog, pool_catalog)
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    _, alive = psutil.wait_procs(left, timeout=10)
    assert not alive, f"worker processes left behind: {[p.cmdline() for p in alive]}"


def _driver(archive: Path, catalog: Path, *executor: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "analyzer", "batch", str(archive), "--catalog", str(catalog), "--verbose", *executor]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)


def _busy_worker_pid(client, timeout: float = 30) -> int:
    """The pid of a worker process that is running a task now."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = [addr for addr, keys in client.processing().items() if keys]
        if busy:
            return client.run(os.getpid, workers=busy[:1])[busy[0]]
        time.sleep(0.05)
    raise AssertionError("no worker was running a task")


def test_dask_worker_killed_mid_batch_loses_and_duplicates_no_run(archive, pool_catalog, cluster):
    address, client = cluster
    catalog = archive.parent / "worker-killed.duckdb"
    proc = _driver(archive, catalog, "--executor", "dask", "--scheduler", address)
    try:
        # struck as soon as a worker runs a chunk: the batch's first chunks run for seconds, so the kill lands
        # mid-task; waiting for the first commits instead raced the last chunk, which may have ended by then
        victim = _busy_worker_pid(client)
        os.kill(victim, signal.SIGKILL)
        lines = proc.stdout.readlines()
        assert proc.wait(120) == 0
    finally:
        stop_session(proc)
    assert not psutil.pid_exists(victim) or psutil.Process(victim).status() == psutil.STATUS_ZOMBIE
    assert sum(line.startswith("catalogued:") for line in lines) == RUNS
    _assert_same_catalog(catalog, pool_catalog)
    client.wait_for_workers(2, timeout=60)  # the nanny restarts the killed worker for the next test


def _running_after(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Those of ``procs`` still running after ``timeout`` s, or none as soon as none runs. A zombie runs nothing:
    orphaned by their driver, exited workers wait for init to reap them, which ``psutil.wait_procs`` would
    wait for too (seconds in some containers)."""

    def running() -> list[psutil.Process]:
        found = []
        for p in procs:
            try:
                if p.status() != psutil.STATUS_ZOMBIE:
                    found.append(p)
            except psutil.NoSuchProcess:
                continue
        return found

    deadline = time.monotonic() + timeout
    while (alive := running()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def test_dask_driver_killed_mid_batch_then_rerun_completes_the_catalog(archive, pool_catalog, cluster):
    address, _ = cluster
    catalog = archive.parent / "driver-killed.duckdb"
    proc = _driver(archive, catalog, "--executor", "dask", "--jobs", "2")  # its own local cluster
    workers = []
    try:
        committed = 0
        for line in proc.stdout:
            committed += line.startswith("catalogued:")
            if committed == 3:
                workers = psutil.Process(proc.pid).children(recursive=True)
                os.kill(proc.pid, signal.SIGKILL)  # the driver only: its workers must go by themselves
                break
        proc.wait(30)
        assert committed == 3 and proc.returncode == -signal.SIGKILL
        alive = _running_after(workers, 20)
        assert not alive, f"worker processes outlived their driver: {[p.cmdline() for p in alive]}"
    finally:
        stop_session(proc)
    assert 3 <= len(_dump(catalog)["catalog_runs"]) < RUNS
    assert main(["batch", str(archive), "--catalog", str(catalog), "--executor", "dask", "--scheduler", address]) == 0
    _assert_same_catalog(catalog, pool_catalog)


def test_dask_executor_without_dask_installed_says_how_to_install(archive, tmp_path):
    code = (
        "import sys; sys.modules['distributed'] = None\n"
        "from analyzer.cli import main\n"
        f"sys.exit(main(['batch', {str(archive)!r}, '--catalog', {str(tmp_path / 'c.duckdb')!r}, "
        "'--executor', 'dask']))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "pip install 'npu-triage[dask]'" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "c.duckdb").exists()


@pytest.fixture(scope="module")
def job_archive(tmp_path_factory) -> Path:
    """Two generated jobs (a slow rank among 12, a slow link among 16), ranks holding summaries only (of
    different world sizes: the generator gives every job the same collection times)."""
    from fixtures.generator.job_layout import write_job
    from fixtures.generator.job_scenarios import job_plan

    root = tmp_path_factory.mktemp("dask-jobs") / "archive"
    write_job(job_plan("job_slow_rank", 12, 71, 3), root / "a")
    write_job(job_plan("job_slow_link", 16, 72, 3), root / "b")
    return root


def test_dask_batch_computes_jobs_on_the_cluster_identical_to_the_local_pool(job_archive, cluster, capsys):
    address, client = cluster
    pool = job_archive.parent / "jobs-pool.duckdb"
    assert main(["batch", str(job_archive), "--catalog", str(pool), "--jobs", "2"]) == 0
    before = client.run(lambda: __import__("os").getpid())
    catalog = job_archive.parent / "jobs-cluster.duckdb"
    args = ["batch", str(job_archive), "--catalog", str(catalog), "--executor", "dask", "--scheduler", address]
    assert main(args) == 0
    assert "2 job(s) catalogued" in capsys.readouterr().out
    got, want = _dump(catalog), _dump(pool)
    for table in ("catalog_jobs", "job_rank_metrics", "job_link_metrics", "job_findings", "failures"):
        assert got[table] == want[table], f"table {table} differs"
    assert sorted((r[0].split("@")[0], r[3]) for r in got["job_findings"] if r[1] == 1) == [
        ("job_slow_link", "slow-link"),
        ("job_slow_rank", "slow-rank"),
    ]
    # The jobs ran on the cluster's workers: their task log names a batch's items (chunks of runs and jobs).
    logs = client.run_on_scheduler(
        lambda dask_scheduler: sorted({k[0] if isinstance(k, tuple) else k for k in dask_scheduler.task_prefixes})
    )
    assert "analyze_item" in logs, logs
    assert before == client.run(lambda: __import__("os").getpid())  # no worker was lost doing it


def test_dask_batch_names_copies_and_reruns_as_the_local_pool(cluster, tmp_path, capsys):
    """Copies named, a rerun reporting what the first batch lost with its exit code: the same lines, codes and
    catalog on the cluster as in the local pool (the driver decides them, whichever executor analyses)."""
    from tests.test_runs_batch_state import state_tree

    address, _ = cluster
    root = state_tree(tmp_path / "tree")
    said = {}
    for name, executor in (("pool", ["--jobs", "1"]), ("dask", ["--executor", "dask", "--scheduler", address])):
        catalog = tmp_path / f"{name}.duckdb"
        batches = []
        for _ in range(2):
            code = main(["batch", str(root), "--catalog", str(catalog), *executor])
            captured = capsys.readouterr()
            batches.append((code, captured.out.replace(str(catalog), "CATALOG"), captured.err))
        said[name] = batches, _dump(catalog)
    assert said["dask"] == said["pool"]
    (first, again), catalog = said["dask"]
    assert first[0] == again[0] == 3 and again[2] == first[2]
    assert "copy: mirror/good is identical to good," in first[1] and len(catalog["copies"]) == 1
    assert [r[0] for r in catalog["failures"]] == ["no_starts"]


@pytest.fixture
def job_failing_everywhere(cluster, monkeypatch):
    """The cluster's (address, client), the analysis of tests/job_failure.py's job failing on its workers and in this
    process (where `--jobs 1` works) until the test ends."""
    import cloudpickle

    from analyzer.runs import job_catalog
    from tests import job_failure

    _, client = cluster
    cloudpickle.register_pickle_by_value(job_failure)  # the workers need not import the tests
    monkeypatch.setattr(job_catalog, "job_tables", job_failure.failing(job_catalog.job_tables))
    client.run(job_failure.install)
    try:
        yield cluster
    finally:
        client.run(job_failure.uninstall)
        cloudpickle.unregister_pickle_by_value(job_failure)


def test_dask_batch_knows_a_failed_job_and_counts_re_judged_ranks_as_the_local_pool(
    job_failing_everywhere, tmp_path, capsys
):
    """A job whose analysis fails said again and not analysed again, then, one of its ranks changed, tried again
    with its known ranks counted as re-judged: the same lines, codes and catalog on the cluster as in the pool."""
    from tests.test_runs_batch_jobs import a_rank_changed, write_failing_job

    address, _ = job_failing_everywhere
    root = write_failing_job(tmp_path / "tree")
    said = {}
    for name, executor in (("pool", ["--jobs", "1"]), ("dask", ["--executor", "dask", "--scheduler", address])):
        catalog = tmp_path / f"{name}.duckdb"
        batches = []
        for changed in (False, False, True):
            kernels = a_rank_changed(root) if changed else None
            code = main(["batch", str(root), "--catalog", str(catalog), *executor])
            captured = capsys.readouterr()
            batches.append((code, captured.out.replace(str(catalog), "CATALOG"), captured.err))
            if kernels:  # the tree as it was, for the other executor
                kernels.write_bytes(kernels.read_bytes()[:-1])
        said[name] = batches, _dump(catalog)
    assert said["dask"] == said["pool"]
    (first, again, changed), catalog = said["dask"]
    assert "0 run(s) catalogued, 4 already in the catalog (skipped)" in again[1] and again[2] == first[2]
    assert "1 run(s) catalogued, 3 known job rank(s) re-judged with their job" in changed[1]
    assert [r[0] for r in catalog["failures"]] == ["job_slow_rank", "job_slow_rank", "no_starts"]
