"""A chunk's jobs go into the catalog in one transaction: each replaces its earlier rows, all or none."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from analyzer.rule_engine.model import ConfiguredRules
from analyzer.runs.batch import plan_batch
from analyzer.runs.catalog import open_catalog
from analyzer.runs.job_catalog import JOB_TABLES, _inserts, commit_jobs, job_tables
from analyzer.runs.work import batch_rules

JOB = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "job_slow_rank"


@pytest.fixture(scope="module")
def two_jobs(tmp_path_factory) -> list[dict]:
    """The example job's catalog rows under two fingerprints: two distinct jobs."""
    plan = plan_batch(JOB, tmp_path_factory.mktemp("work"))
    (job, label), *_ = plan.jobs
    configured = ConfiguredRules(batch_rules(None))
    return [job_tables(job, label, fingerprint, configured, True) for fingerprint in ("1" * 16, "2" * 16)]


@pytest.fixture(scope="module")
def job_elsewhere(tmp_path_factory) -> dict:
    """The example job's catalog rows as found in another folder ('copy/job_slow_rank'), under a third fingerprint."""
    plan = plan_batch(JOB, tmp_path_factory.mktemp("work"))
    (job, _), *_ = plan.jobs
    return job_tables(job, "copy/job_slow_rank", "3" * 16, ConfiguredRules(batch_rules(None)), True)


def _counts(catalog) -> dict[str, list[tuple]]:
    return {
        name: catalog.execute(f"SELECT job_id, count(*) FROM {name} GROUP BY ALL ORDER BY ALL").fetchall()
        for name in JOB_TABLES
    }


@pytest.mark.slow
def test_jobs_committed_together_replace_their_earlier_rows(tmp_path, two_jobs):
    catalog = open_catalog(tmp_path / "catalog.duckdb")
    commit_jobs(catalog, two_jobs)
    once = _counts(catalog)
    assert [row[0] for row in once["catalog_jobs"]] == ["job_slow_rank@11111111", "job_slow_rank@22222222"]
    assert once["job_rank_metrics"] == [("job_slow_rank@11111111", 8), ("job_slow_rank@22222222", 8)]
    commit_jobs(catalog, two_jobs)
    assert _counts(catalog) == once


@pytest.mark.slow
def test_a_job_judged_again_replaces_its_earlier_state_at_its_folder_and_no_other_job(
    tmp_path, two_jobs, job_elsewhere
):
    """The same job (folder and name) with other ranks' exports, e.g. it gained ranks: one job, the latest."""
    catalog = open_catalog(tmp_path / "catalog.duckdb")
    for tables in (two_jobs[0], job_elsewhere, two_jobs[1]):
        commit_jobs(catalog, [tables])
    found = _counts(catalog)
    assert [row[0] for row in found["catalog_jobs"]] == ["job_slow_rank@22222222", "job_slow_rank@33333333"]
    assert all(job_id != "job_slow_rank@11111111" for rows in found.values() for job_id, _ in rows)

    # the near miss: a job the batch's tree still holds (kept) is no earlier state of another
    commit_jobs(catalog, [two_jobs[0]], kept={"2" * 16, "1" * 16})
    assert [row[0] for row in _counts(catalog)["catalog_jobs"]] == [f"job_slow_rank@{d * 8}" for d in "123"]


def test_a_job_that_fails_to_go_in_leaves_none_of_the_chunk(tmp_path, two_jobs):
    catalog = open_catalog(tmp_path / "catalog.duckdb")
    broken = {**two_jobs[1], "no_such_table": two_jobs[1]["catalog_jobs"]}
    with pytest.raises(Exception, match="no_such_table"):
        commit_jobs(catalog, [two_jobs[0], broken])
    assert _counts(catalog) == {name: [] for name in JOB_TABLES}


def _rows(catalog) -> dict[str, list[tuple]]:
    return {name: catalog.execute(f"SELECT * FROM {name} ORDER BY ALL").fetchall() for name in JOB_TABLES}


def test_jobs_tables_of_one_schema_go_in_as_one_and_a_differing_one_alone(tmp_path, two_jobs, job_elsewhere):
    jobs = job_elsewhere["catalog_jobs"]
    # a job whose column is NULL is made with Arrow's null type there: its table goes in on its own
    untyped = {
        **job_elsewhere,
        "catalog_jobs": jobs.set_column(jobs.schema.get_field_index("groups"), "groups", pa.nulls(1)),
    }
    inserts = [name for name, _ in _inserts([two_jobs[0], untyped])]
    assert inserts.count("catalog_jobs") == 2 and inserts.count("job_rank_metrics") == 1
    together = open_catalog(tmp_path / "together.duckdb")
    commit_jobs(together, [two_jobs[0], untyped])
    alone = open_catalog(tmp_path / "alone.duckdb")
    for job in (two_jobs[0], untyped):
        commit_jobs(alone, [job])
    assert _rows(together) == _rows(alone)
    groups = together.execute("SELECT groups FROM catalog_jobs ORDER BY job_id").fetchall()
    assert groups[0][0] is not None and groups[1][0] is None
