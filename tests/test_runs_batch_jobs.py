"""A batch's jobs across batches: a job whose analysis failed is known as a failed run is, until one of its ranks
changes; a job catalogued with some of its ranks is replaced once it has them all; the first line counts the known
ranks judged again with their job apart from the runs new to the catalog."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from analyzer.cli import main
from analyzer.cli.batch_cmd import _report
from analyzer.runs import job_catalog
from analyzer.runs.batch import BatchOutcome, run_batch
from analyzer.runs.catalog import open_catalog
from analyzer.runs.catalog_schema import CATALOG_TABLES
from analyzer.runs.executor import LocalPool
from analyzer.runs.work import WorkSettings
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan
from tests.job_failure import FAILING_JOB, MESSAGE, failing
from tests.test_runs_batch_state import _unreadable_starts


def _batch(root: Path, catalog: Path) -> int:
    return main(["batch", str(root), "--catalog", str(catalog), "--jobs", "1"])


def _tables(catalog: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return {name: con.execute(f"SELECT * FROM {name} ORDER BY ALL").fetchall() for name in CATALOG_TABLES}
    finally:
        con.close()


def _summary(out: str) -> str:
    return next(line for line in out.splitlines() if "run(s) catalogued" in line)


def write_failing_job(root: Path) -> Path:
    """A tree of a job of 4 ranks (each with its kernels: a run of its own too), the job whose analysis
    tests/job_failure.py makes fail, and a run of no job that fails (its start times unreadable); returns ``root``."""
    write_job(job_plan(FAILING_JOB, 4, 0, 2), root, kernels=3)
    _unreadable_starts(root / "no_starts")
    return root


def a_rank_changed(root: Path) -> Path:
    """The kernel_details.csv of rank 2 of ``write_failing_job``'s job, a line end added: its export's fingerprint
    changes, and so the job's; returns the file."""
    kernels = next((root / "job_slow_rank").glob("rank2_*/ASCEND_PROFILER_OUTPUT/kernel_details.csv"))
    kernels.write_bytes(kernels.read_bytes() + b"\n")
    return kernels


@pytest.fixture
def failing_job(tmp_path, monkeypatch) -> Path:
    """The tree of ``write_failing_job``, its job's analysis failing in this process (where `--jobs 1` works)."""
    monkeypatch.setattr(job_catalog, "job_tables", failing(job_catalog.job_tables))
    return write_failing_job(tmp_path / "tree")


@pytest.mark.slow  # three batches: the full suite, not the fast loop
def test_a_failed_job_is_said_again_not_analysed_again_until_one_of_its_ranks_changes(failing_job, tmp_path, capsys):
    catalog = tmp_path / "c.duckdb"
    assert _batch(failing_job, catalog) == 0
    first = capsys.readouterr()
    assert _summary(first.out).startswith("4 run(s) catalogued, 0 already in the catalog (skipped), 2 failure(s)")
    failures = {row[0]: row for row in _tables(catalog)["failures"]}
    _, job_print, message = failures["job_slow_rank"]
    assert message == f"job analysis failed: RuntimeError: {MESSAGE}"
    assert "failed: job_slow_rank: job analysis failed" in first.err and "failed: no_starts:" in first.err
    assert not _tables(catalog)["catalog_jobs"]
    before = _tables(catalog)

    # the same tree again: the job's failure and the run's said again, nothing analysed, the catalog unchanged
    assert _batch(failing_job, catalog) == 0
    again = capsys.readouterr()
    assert _summary(again.out).startswith(
        "0 run(s) catalogued, 4 already in the catalog (skipped), 2 failure(s) recorded (2 by an earlier batch)"
    )
    assert again.err == first.err
    assert _tables(catalog) == before

    # one rank's export changes: the job is a new one, tried again (and fails again), its known ranks re-judged
    a_rank_changed(failing_job)
    assert _batch(failing_job, catalog) == 0
    changed = capsys.readouterr()
    assert _summary(changed.out).startswith(
        "1 run(s) catalogued, 3 known job rank(s) re-judged with their job, 0 already in the catalog (skipped), "
        "2 failure(s) recorded (1 by an earlier batch)"
    )
    job_rows = [r for r in _tables(catalog)["failures"] if r[0] == "job_slow_rank"]
    assert len(job_rows) == 2 and job_print in {r[1] for r in job_rows}


@dataclass
class Grown:
    """A job batched with three of its four ranks, then with all of them, into one catalog; and the whole job
    batched into a catalog of its own."""

    fresh: Path
    grown: Path
    outcomes: list[BatchOutcome]  # of the grown catalog's batches: three ranks, four, four again
    tables: list[dict[str, list[tuple]]]  # the grown catalog's after each


def _batched(root: Path, catalog: Path) -> BatchOutcome:
    con = open_catalog(catalog)
    try:
        return run_batch(root, con, WorkSettings(), LocalPool(1))
    finally:
        con.close()


@pytest.fixture(scope="module")
def grown(tmp_path_factory) -> Grown:
    top = tmp_path_factory.mktemp("grown")
    whole = write_job(job_plan("job_slow_rank", 4, 0, 2), top / "whole", kernels=3)
    fresh, grown = top / "fresh.duckdb", top / "grown.duckdb"
    _batched(whole.parent, fresh)  # the near miss: the job complete the first time
    part = top / "tree" / whole.name  # the same paths in the tree as the fresh batch's
    ranks = sorted(whole.glob("rank*"))
    for rank in ranks[:3]:
        shutil.copytree(rank, part / rank.name)
    outcomes, tables = [_batched(part.parent, grown)], [_tables(grown)]
    shutil.copytree(ranks[3], part / ranks[3].name)
    for _ in range(2):  # the whole job, then the same again: all known
        outcomes.append(_batched(part.parent, grown))
        tables.append(_tables(grown))
    return Grown(fresh, grown, outcomes, tables)


@pytest.mark.slow  # four batches: test_runs_job_commit checks the replacing on the fast loop
def test_a_job_batched_with_some_ranks_then_all_is_catalogued_once_as_a_fresh_batch_of_all(grown):
    assert [(r[1], r[3]) for r in grown.tables[0]["catalog_jobs"]] == [("job_slow_rank", 3)]
    assert grown.outcomes[0].partial  # three of the four ranks: the job lost input
    assert grown.tables[1] == _tables(grown.fresh)  # the partial job's rows replaced, in every table
    assert not grown.outcomes[2].jobs and grown.tables[2] == grown.tables[1]  # all known: nothing changes


@pytest.mark.slow  # four batches (the fixture's)
def test_known_ranks_judged_again_with_their_grown_job_are_counted_apart_from_new_runs(grown, capsys):
    partial, whole, again = grown.outcomes
    assert [label.split("/")[1][:6] for label in whole.catalogued] == ["rank3_"]  # the one run new to the catalog
    assert len(partial.catalogued) == 3 and not partial.rejudged
    assert sorted(whole.rejudged) == sorted(partial.catalogued)
    assert not again.catalogued and not again.rejudged and len(again.skipped) == 4
    _report(whole, grown.grown)
    assert _summary(capsys.readouterr().out).startswith(
        "1 run(s) catalogued, 3 known job rank(s) re-judged with their job, 0 already in the catalog (skipped)"
    )
    _report(again, grown.grown)  # the near miss: an unchanged re-batch says nothing was judged again
    assert _summary(capsys.readouterr().out).startswith("0 run(s) catalogued, 4 already in the catalog (skipped)")
