"""A batch worker's chunk of runs, read and judged in one pass, gives every run the rows it gets alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from analyzer.ingest.metadata.discover import scan
from analyzer.ingest.metadata.fingerprint import source_fingerprint
from analyzer.runs.batch import plan_batch, run_batch
from analyzer.runs.catalog import open_catalog
from analyzer.runs.catalog_schema import CATALOG_TABLES
from analyzer.runs.chunk_work import RunChunk, analyze_chunk
from analyzer.runs.chunks import plan_chunks, plan_job_chunks
from analyzer.runs.executor import LocalPool
from analyzer.runs.job_catalog import JobChunk, JobTask, analyze_job, analyze_jobs, job_fingerprint
from analyzer.runs.work import RunTask, WorkSettings, analyze_run
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan
from tests.tiny_exports import write_tiny_export

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "examples"


def _task(folder: Path) -> RunTask:
    sources = scan(folder)[0]
    fingerprint = source_fingerprint(sources[0]) if sources else "0" * 16
    return RunTask(str(folder), folder.name, fingerprint)


def _rows(tables: dict) -> dict[str, list[dict]]:
    return {name: table.to_pylist() for name, table in sorted(tables.items())}


@pytest.mark.slow  # whole batches: the full suite, not the fast loop
def test_a_chunk_with_damaged_runs_gives_each_run_the_rows_it_gets_alone(tmp_path):
    good = [write_tiny_export(tmp_path / f"good_{i}" / "run", seed=i, steps=4) for i in range(3)]  # one name
    damaged = write_tiny_export(tmp_path / "damaged", seed=7, steps=4)
    csv = damaged / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    lines = csv.read_text().splitlines(keepends=True)
    csv.write_text(lines[0] + "".join(line.replace(",AI_CORE,", ",AI_CORE,not a time") for line in lines[1:]))
    partial = write_tiny_export(tmp_path / "partial", seed=8, steps=4)
    csv = partial / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    csv.write_text(csv.read_text() + "9,Bad_1,Add,AI_CORE,never,oops,\n")
    (tmp_path / "empty").mkdir()
    folders = [good[0], damaged, good[1], tmp_path / "empty", partial, good[2], tmp_path / "gone"]
    tasks = tuple(_task(f) for f in folders)
    settings = WorkSettings()
    together = analyze_chunk(RunChunk(tasks), settings)
    alone = [analyze_run(task, settings) for task in tasks]
    assert [_rows(t) for t in together] == [_rows(t) for t in alone]
    failed = [t["failures"].to_pylist()[0]["message"] for t in together if "failures" in t]
    assert len(failed) == 3 and failed[0].startswith("nothing usable")  # damaged, empty, gone
    assert len({t["catalog_runs"]["run_id"][0].as_py() for t in together if "catalog_runs" in t}) == 4
    assert together[4]["run_problems"].num_rows > 0 and together[0]["findings"].num_rows > 0


def test_chunks_keep_the_order_and_bound_runs_and_bytes():
    tasks = [RunTask(f"/x/{i}", f"r{i:02d}", f"{i:016d}") for i in range(20)]
    chunks = plan_chunks(tasks, 2, [1] * 20)
    assert [t for c in chunks for t in c.tasks] == tasks and {len(c.tasks) for c in chunks} == {10}
    big = plan_chunks(tasks, 1, [40 << 20] * 20)  # each export over half the bytes of a chunk
    assert [len(c.tasks) for c in big] == [1] * 20


class _RunByRun(LocalPool):
    """This process, a chunk per run: today's run-by-run analysis."""

    slots = 1_000


def _catalog(tmp_path: Path, root: Path, name: str, executor: LocalPool) -> dict[str, list[tuple]]:
    con = open_catalog(tmp_path / f"{name}.duckdb")
    outcome = run_batch(root, con, WorkSettings(), executor)
    con.close()
    assert len(outcome.catalogued) == 6
    with duckdb.connect(str(tmp_path / f"{name}.duckdb"), read_only=True) as cat:
        return {t: cat.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in CATALOG_TABLES}


@pytest.mark.slow  # whole batches: the full suite, not the fast loop
def test_the_catalog_of_a_chunked_batch_equals_the_run_by_run_one(tmp_path):
    root = tmp_path / "examples"
    for name in ("batch_sweep", "resnet_host_sync"):
        shutil.copytree(EXAMPLES / name, root / name, ignore=shutil.ignore_patterns("*.md"))
    assert len(plan_chunks([_task(root)] * 6, LocalPool(1).slots, [0] * 6)) == 2  # three runs a chunk
    assert _catalog(tmp_path, root, "chunked", LocalPool(1)) == _catalog(tmp_path, root, "alone", _RunByRun(1))


class _Recording(LocalPool):
    """This process, recording the items of every call to ``completed``."""

    def __init__(self) -> None:
        super().__init__(1)
        self.calls: list[list] = []

    def completed(self, fn, items, *args):
        self.calls.append(list(items))
        yield from super().completed(fn, items, *args)


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_a_batchs_jobs_go_to_the_workers_of_its_chunks_after_them(tmp_path):
    root = tmp_path / "tree"
    for name in ("job_slow_rank", "resnet_host_sync"):
        shutil.copytree(EXAMPLES / name, root / name, ignore=shutil.ignore_patterns("*.md"))
    executor, con = _Recording(), open_catalog(tmp_path / "c.duckdb")
    try:
        outcome = run_batch(root, con, WorkSettings(), executor)
    finally:
        con.close()
    assert outcome.jobs == ["job_slow_rank"] and outcome.catalogued
    (items,) = executor.calls  # one pool for the runs and the jobs: its workers start once
    assert [type(i) for i in items] == [RunChunk, JobChunk]


@pytest.mark.slow  # jobs loaded alone and together: the full suite, not the fast loop
def test_jobs_judged_in_one_connection_give_the_rows_each_gets_alone(tmp_path):
    """Several jobs of a batch read into one connection, their job rules run once over all of them
    (judge_jobs): each job's catalog rows, findings included, are those it gets in a connection of its own;
    the chunks cut by ranks and about one per worker."""
    root = tmp_path / "jobs"
    for i, (name, kernels) in enumerate((("job_slow_rank", 0), ("job_pipeline_imbalance", 6), ("job_balanced", 0))):
        write_job(job_plan(name, ranks=8, seed=30 + i), root, kernels=kernels)
    plan = plan_batch(root, tmp_path / "scratch")
    tasks = [JobTask(job, label, job_fingerprint(job, plan.prints)) for job, label in plan.jobs]
    assert len(tasks) == 3
    together = analyze_jobs(JobChunk(tuple(tasks)), WorkSettings())
    assert all("catalog_jobs" in t for t in together)
    assert any("job_findings" in t for t in together)  # the rules' findings split back to their job
    assert together == [analyze_job(t, WorkSettings()) for t in tasks]
    assert [len(c.tasks) for c in plan_job_chunks(tasks, 2)] == [2, 1]
    assert [len(c.tasks) for c in plan_job_chunks(tasks * 20, 1)] == [8] * 7 + [4]  # 64 ranks a chunk
