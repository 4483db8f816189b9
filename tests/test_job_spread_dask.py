"""`diagnose JOB --executor dask|local`: a job's ranks read by real worker processes (a Dask cluster, the local
pool) give the diagnosis of one process byte for byte: every file, the TSV, the messages, the exit code."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from analyzer.cli import main
from tests.real_process_fixtures import GROUP, NEEDS_DASK
from tests.spread_jobs import DAMAGED_RANK, write_damaged_job

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(GROUP), NEEDS_DASK]  # with the other real-process modules


def _diagnose(job: Path, out: Path, *options: str) -> tuple[int, str, str, dict[str, bytes]]:
    """Exit code, TSV, messages (the output folder named OUT) and every file written."""
    said, messages = io.StringIO(), io.StringIO()
    with redirect_stdout(said), redirect_stderr(messages):
        code = main(["diagnose", str(job), "--out", str(out), "--format", "json,md", *options])
    files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    return code, said.getvalue(), messages.getvalue().replace(str(out), "OUT"), files


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    return write_damaged_job(tmp_path_factory.mktemp("spread_dask"), ranks=8)


@pytest.fixture(scope="module")
def one_process(job, tmp_path_factory) -> tuple[int, str, str, dict[str, bytes]]:
    """The job's diagnosis read in this process, as without the options."""
    want = _diagnose(job, tmp_path_factory.mktemp("one") / "out")
    assert want[0] == 3  # the cut rank: part of the input lost
    assert f"rank{DAMAGED_RANK}_" in want[2] and "ends mid-row" in want[2]
    assert len(want[3]) == 2 * 9  # json and md of the job and of each rank
    return want


@pytest.mark.parametrize("where", ["running cluster", "local pool"])
def test_ranks_read_by_workers_give_the_diagnosis_of_one_process(job, one_process, tmp_path, cluster, where):
    import distributed

    address, client = cluster
    options = ["--executor", "dask", "--scheduler", address] if where == "running cluster" else []
    options = options or ["--executor", "local", "--jobs", "2"]
    with distributed.get_task_stream(client) as stream:  # the scheduler's record of every task run meanwhile
        got = _diagnose(job, tmp_path / "out", *options)
    assert got == one_process
    chunks = [t for t in stream.data if "read_chunk" in str(t["key"])]
    assert len(chunks) == (4 if where == "running cluster" else 0)  # 2 a worker: 4 chunks of 2 ranks


def test_a_local_dask_cluster_gives_the_diagnosis_of_one_process(job, one_process, tmp_path):
    assert _diagnose(job, tmp_path / "out", "--executor", "dask", "--jobs", "2") == one_process
