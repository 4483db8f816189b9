"""A batch applies its jobs' explanations to their ranks' findings: the catalog holds what diagnosis.json says."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

import analyzer
from analyzer.cli import main
from analyzer.report.json_export import diagnosis_dict, fixed
from analyzer.runs.batch import run_batch
from analyzer.runs.catalog import open_catalog
from analyzer.runs.catalog_schema import CATALOG_FORMAT_VERSION, CATALOG_TABLES, PER_RUN_TABLES
from analyzer.runs.work import WorkSettings
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "examples"
EXPLAINED = [c.name for c in CATALOG_TABLES["findings"].columns if "explained" in c.name]
# diagnosis.json's explained_by keys, by the catalog column holding each
BY_KEYS = {
    "explained_by": "text",
    "explained_code": "code",
    "explained_rule": "rule",
    "explained_subject": "subject",
    "explained_note": "note",
    "severity_before_explained": "severity",
    "explained_ms": "explained_ms",
    "explained_amount_ms": "amount_ms",
    "explained_own_ms": "own_ms",
    "explained_per": "per",
    "explained_waits": "waits",
    "explained_partial": "partial",
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A job with a slow rank, a job without one (the near miss) and a run of no job, each rank with its
    kernel_details."""
    root = tmp_path_factory.mktemp("tree")
    write_job(job_plan("job_slow_rank", 4, 0, 2), root / "slow", kernels=3)
    write_job(job_plan("job_balanced", 4, 1, 2), root / "even", kernels=3)
    shutil.copytree(EXAMPLES / "resnet_host_sync", root / "alone" / "resnet_host_sync")
    return root


@pytest.fixture(scope="module")
def diagnosed(tree) -> dict[str, list[dict]]:
    """diagnosis.json's findings of every run `diagnose` judges in the tree, by the run's folder name."""
    trace = analyzer.load(tree)
    try:
        found = analyzer.diagnose_all(trace)
    finally:
        trace.close()
    docs = [diagnosis_dict(d) for d in found if d.run.get("scope") != "job"]
    return {doc["run"]["source_path"]: doc["findings"] for doc in docs}


def _batch(root: Path, catalog: Path, jobs: int = 1) -> int:
    return main(["batch", str(root), "--catalog", str(catalog), "--jobs", str(jobs)])


@pytest.fixture(scope="module")
def slow_catalog(tree, tmp_path_factory) -> Path:
    """A fresh batch of the job with a slow rank alone."""
    catalog = tmp_path_factory.mktemp("slow") / "c.duckdb"
    assert _batch(tree / "slow", catalog) == 0
    return catalog


def _catalogued(catalog: Path) -> dict[str, list[dict]]:
    """The catalog's findings rows, by the run's path in the tree."""
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        sql = "SELECT r.path, f.* FROM findings f JOIN catalog_runs r USING (run_id) ORDER BY path, rank"
        rows = con.sql(sql).to_arrow_table().to_pylist()
    finally:
        con.close()
    by_run: dict[str, list[dict]] = {}
    for row in rows:
        by_run.setdefault(row["path"], []).append(row)
    return by_run


def _as_json(row: dict) -> dict:
    """What of a diagnosis.json finding the catalog row holds, in its form (``diagnosis_dict``'s rounding)."""
    by = {key: row[column] for column, key in BY_KEYS.items() if row[column] is not None}
    before = row["impact_before_explained_us"]
    keep = ("rank", "code", "severity", "subject", "impact_us", "span_share", "value", "threshold", "message")
    return fixed({**{k: row[k] for k in keep}, "explained_by": by or None, "before": before})


def _from_json(f: dict) -> dict:
    keep = ("rank", "code", "severity", "subject", "impact_us", "span_share", "value", "threshold", "message")
    return {
        **{k: f[k] for k in keep},
        "explained_by": f.get("explained_by"),
        "before": f["details"].get("impact_before_explained_us"),
    }


@pytest.mark.slow  # a batch of a job with its ranks: the full suite, not the fast loop
def test_a_batch_catalogs_each_rank_finding_as_its_diagnosis_json_says(tree, diagnosed, tmp_path):
    catalog = tmp_path / "c.duckdb"
    assert _batch(tree, catalog, jobs=2) == 0
    got = _catalogued(catalog)
    assert sorted(got) == sorted(diagnosed) and len(got) == 9
    for run, findings in diagnosed.items():
        assert [_as_json(row) for row in got[run]] == [_from_json(f) for f in findings], run
    explained = {run for run, rows in got.items() if any(r["explained_by"] for r in rows)}
    slow = sorted(f"slow/job_slow_rank/{p.name}" for p in (tree / "slow" / "job_slow_rank").glob("rank*"))
    assert len(explained) == 3 and explained < set(slow)  # every rank but the slow one waits for it
    # the near misses: the balanced job's ranks and the run of no job fire without any job finding to explain them
    near = [r for run, rows in got.items() if run not in slow for r in rows]
    assert near and all(r[c] is None for r in near for c in EXPLAINED)
    assert {r["code"] for r in near} >= {"COM001", "CMP001"}


class _JobsFirst:
    """A one-slot executor (this process) that hands back the batch's jobs before its runs: a rank's job may be
    judged before the rank, and the rank must still be explained."""

    slots = 1

    def completed(self, fn, items, settings) -> Iterator:
        done = [(item, fn(item, settings)) for item in items]
        yield from sorted(done, key=lambda d: type(d[0]).__name__ != "JobChunk")


@pytest.mark.slow  # a second batch of the same tree
def test_ranks_judged_after_their_job_are_explained_too(tree, slow_catalog, tmp_path):
    con = open_catalog(tmp_path / "first.duckdb")
    outcome = run_batch(tree / "slow", con, WorkSettings(), _JobsFirst())
    con.close()
    assert len(outcome.catalogued) == 4
    assert _catalogued(tmp_path / "first.duckdb") == _catalogued(slow_catalog)


def _tables(catalog: Path, names: tuple[str, ...] = PER_RUN_TABLES) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return {name: con.execute(f"SELECT * FROM {name} ORDER BY ALL").fetchall() for name in names}
    finally:
        con.close()


@pytest.mark.slow  # a second batch of the same tree
def test_incremental_batches_come_out_as_a_fresh_one(tree, slow_catalog, tmp_path):
    """Ranks catalogued before their job is complete are judged again with it; a rerun changes nothing."""
    job = tree / "slow" / "job_slow_rank"
    ranks = sorted(job.glob("rank*"))
    part = tmp_path / "tree" / job.name  # the same paths in the tree as the fresh batch's
    part.mkdir(parents=True)
    for rank in ranks[:2]:
        shutil.copytree(rank, part / rank.name)
    grown = tmp_path / "grown.duckdb"
    assert _batch(tmp_path / "tree", grown) == 3  # two of the four ranks: the job lost input
    for rank in ranks[2:]:
        shutil.copytree(rank, part / rank.name)
    assert _batch(tmp_path / "tree", grown) == 0
    assert _tables(grown) == _tables(slow_catalog)
    assert sum(1 for r in _catalogued(grown).values() for f in r if f["explained_by"]) == 3
    assert _batch(tmp_path / "tree", grown) == 0  # all known: skipped, nothing changes
    assert _tables(grown) == _tables(slow_catalog)


def _findings_columns(catalog: Path) -> list[str]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return [
            r[0]
            for r in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'findings'").fetchall()
        ]
    finally:
        con.close()


def _sql(catalog: Path, *statements: str) -> list[tuple]:
    con = duckdb.connect(str(catalog))
    try:
        rows: list[tuple] = []
        for sql in statements:
            rows = con.execute(sql).fetchall()
        return rows
    finally:
        con.close()


@pytest.mark.slow  # a second batch of the same tree
def test_an_older_catalog_is_migrated_by_a_batch_and_its_old_rows_read_null(tree, tmp_path, capsys):
    catalog = tmp_path / "old.duckdb"
    assert _batch(tree / "alone", catalog) == 0
    # as a batch of catalog format 1 wrote it: no explained_* columns
    _sql(catalog, *[f"ALTER TABLE findings DROP COLUMN {c}" for c in EXPLAINED])
    _sql(catalog, "UPDATE catalog_info SET value = '1' WHERE key = 'format_version'")
    assert main(["runs", str(catalog)]) == 0  # read as it is
    assert _batch(tree / "slow", catalog) == 0
    assert _findings_columns(catalog)[-len(EXPLAINED) :] == EXPLAINED
    rows = _sql(
        catalog, "SELECT split_part(run_id, '@', 1), count(explained_by) FROM findings GROUP BY ALL ORDER BY ALL"
    )
    assert rows[-1][1] == 0 and rows[-1][0].startswith("resnet") and sum(n for _, n in rows) == 3
    assert _sql(catalog, "SELECT value FROM catalog_info WHERE key = 'format_version'") == [
        (str(CATALOG_FORMAT_VERSION),)
    ]


def test_an_older_catalog_read_only_shows_the_current_columns_as_null_and_is_not_written(tmp_path, capsys):
    catalog = tmp_path / "old.duckdb"
    open_catalog(catalog).close()
    _sql(
        catalog,
        "INSERT INTO findings (run_id, rank, code) VALUES ('r', 1, 'X001')",
        *[f"ALTER TABLE findings DROP COLUMN {c}" for c in EXPLAINED],
        "UPDATE catalog_info SET value = '1' WHERE key = 'format_version'",
    )
    before = catalog.read_bytes()
    capsys.readouterr()
    sql = "SELECT code, count(explained_by) AS explained FROM findings GROUP BY ALL"
    assert main(["query", str(catalog), sql, "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["code,explained", "X001,0"]
    assert main(["export", str(catalog), "--parquet", str(tmp_path / "parquet")]) == 0
    exported = duckdb.sql(f"SELECT * FROM '{tmp_path / 'parquet' / 'findings.parquet'}'")
    assert exported.columns == [c.name for c in CATALOG_TABLES["findings"].columns]
    assert catalog.read_bytes() == before and _findings_columns(catalog)[-1] not in EXPLAINED


def test_a_catalog_newer_than_the_code_is_refused_before_any_work(tree, tmp_path, capsys):
    catalog = tmp_path / "new.duckdb"
    open_catalog(catalog).close()
    newer = str(CATALOG_FORMAT_VERSION + 1)
    _sql(catalog, f"UPDATE catalog_info SET value = '{newer}' WHERE key = 'format_version'")
    before = _tables(catalog, tuple(CATALOG_TABLES))
    capsys.readouterr()
    assert _batch(tree / "slow", catalog) == 2
    err = capsys.readouterr().err
    assert str(catalog) in err and f"catalog format {newer}" in err and "newer npu-triage" in err
    assert _tables(catalog, tuple(CATALOG_TABLES)) == before
    assert _sql(catalog, "SELECT value FROM catalog_info WHERE key = 'format_version'") == [(newer,)]
