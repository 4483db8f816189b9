"""A job analysed twice gives the same bytes: its diagnosis.json, its page data and its catalog rows."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from analyzer.cli import main
from analyzer.execution.threads import ENV
from analyzer.runs.job_catalog import JOB_TABLES
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan

# Enough ranks and steps that DuckDB aggregates the job tables on several threads: with the sums in
# thread order, the last digits of the per-rank waits and the findings' impacts changed between runs.
_RANKS, _STEPS = 256, 4


@pytest.fixture(autouse=True)
def several_duckdb_threads(monkeypatch):
    """Whatever share of the cores the suite's worker has (conftest.py): the sums must not depend on
    the threads' order, so there must be several threads."""
    monkeypatch.setenv(ENV, "4")


@pytest.fixture(scope="module")
def job_root(tmp_path_factory) -> Path:
    return write_job(job_plan("job_slow_rank_host", _RANKS, 43, _STEPS), tmp_path_factory.mktemp("job") / "in")


def _catalog_rows(catalog: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in JOB_TABLES}
    finally:
        con.close()


@pytest.mark.slow
def test_job_diagnosis_json_is_byte_identical_between_two_runs(job_root, tmp_path):
    texts = []
    for n in range(3):
        out = tmp_path / f"out{n}"
        assert main(["diagnose", str(job_root), "--out", str(out), "--format", "json", "--quiet"]) in (0, 1)
        texts.append((out / job_root.name / "diagnosis.json").read_bytes())
    assert texts[0] == texts[1] == texts[2]


@pytest.mark.slow
def test_job_catalog_tables_are_identical_between_two_batches(job_root, tmp_path):
    dumps = []
    for n in range(3):
        catalog = tmp_path / f"catalog{n}.duckdb"
        assert main(["batch", str(job_root.parent), "--catalog", str(catalog), "--jobs", "1"]) == 0
        dumps.append(_catalog_rows(catalog))
    assert dumps[0]["job_findings"], "the planted slow rank is catalogued as a finding"
    assert dumps[0] == dumps[1] == dumps[2]
