"""A job of SQLite-form ranks (torch_npu export_type=db: analysis.db instead of step_trace_time.csv and the
communication JSONs) gets its job tables and verdicts; damaged values in analysis.db are named like those of
the JSON; a job mixing text and db ranks is one job; the databases are never written beside."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from analyzer.cli import main
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan
from tests.job_files import rank_dir
from tests.tree_hash import tree_digest

_APO = "ASCEND_PROFILER_OUTPUT"


def _diagnose(root: Path, out: Path) -> tuple[int, dict]:
    code = main(["diagnose", str(root), "--out", str(out), "--format", "json", "--quiet"])
    (job,) = [
        d for p in sorted(out.glob("*/diagnosis.json")) if (d := json.loads(p.read_text()))["run"].get("scope") == "job"
    ]
    return code, job


def _findings(job: dict) -> list[tuple]:
    return [(f["code"], f["subject"], f["severity"], f["impact_us"], f["message"]) for f in job["findings"]]


def _spoil_db(path: Path, sql: str) -> None:
    """Alter one generated analysis.db (a file of the test's own, written by the generator)."""
    con = sqlite3.connect(path)
    try:
        assert con.execute(sql).rowcount
        con.commit()
    finally:
        con.close()


@pytest.mark.slow
def test_job_of_db_ranks_names_the_slow_rank_and_never_writes_beside_the_databases(tmp_path: Path) -> None:
    root = write_job(job_plan("job_slow_rank", 8, 7, 3), tmp_path / "in", export_type="db")
    truth = json.loads((root / "job_truth.json").read_text())
    assert not [p for p in root.rglob("*") if p.name in ("communication.json", "step_trace_time.csv")]
    before = tree_digest(root)
    code, job = _diagnose(root, tmp_path / "out")
    assert tree_digest(root) == before  # no -wal / -shm beside the databases
    assert code == 0 and job["ingest_problems"] == []
    first = job["findings"][0]
    assert (first["code"], first["subject"]) == ("JOB001", f"rank {truth['slow_rank']}")
    assert all(r["has_step_trace"] and r["has_communication"] and r["has_matrix"] for r in job["run"]["ranks"])


@pytest.mark.slow
def test_job_of_db_ranks_balanced_has_no_slow_rank(tmp_path: Path) -> None:
    root = write_job(job_plan("job_balanced", 8, 7, 3), tmp_path / "in", export_type="db")
    code, job = _diagnose(root, tmp_path / "out")
    assert code == 0 and job["ingest_problems"] == []
    assert job["summary"]["aligned_op_multi_rank_count"] > 0  # the collectives were read
    assert not [f for f in job["findings"] if f["code"] == "JOB001"]


# the whole command on four generated jobs: in the full suite, not the fast loop
@pytest.mark.slow
@pytest.mark.parametrize(
    ("table", "column", "json_name", "value", "reason"),
    [
        ("CommAnalyzerTime", "wait_time", "Wait Time(ms)", "-50", "are negative"),
        ("CommAnalyzerTime", "transit_time", "Transit Time(ms)", "'abc'", "are not numbers"),
        ("StepTraceTime", "computing", "Computing", "9e999", "are not finite"),
        ("CommAnalyzerMatrix", "transit_size", "Transit Size(MB)", "2e9", "are beyond any real value"),
    ],
)
def test_job_damaged_value_in_analysis_db_is_named_like_in_the_text_files(
    tmp_path: Path, table: str, column: str, json_name: str, value: str, reason: str
) -> None:
    scenario = "job_slow_link" if table == "CommAnalyzerMatrix" else "job_slow_rank"
    ranks = 16 if scenario == "job_slow_link" else 8
    root = write_job(job_plan(scenario, ranks, 11, 3), tmp_path / "in", export_type="db")
    truth = json.loads((root / "job_truth.json").read_text())
    rank = next(r for r in range(ranks) if r != truth["slow_rank"] and r not in (truth["slow_link"] or ()))
    spoilt = rank_dir(root, rank) / _APO / "analysis.db"
    _spoil_db(spoilt, f"UPDATE {table} SET {column} = {value} WHERE rowid = 1")
    code, job = _diagnose(root, tmp_path / "out")
    assert code == 0
    (named,) = [p for p in job["ingest_problems"] if p["file"] == str(spoilt)]
    assert named["severity"] == "warning"
    assert named["problem"].startswith(f"rank {rank}: 1 value(s) of {column!r} {reason}")
    assert json_name not in named["problem"]
    first = job["findings"][0]
    expected = f"rank {truth['slow_rank']}" if truth["slow_rank"] is not None else f"rank {truth['slow_link'][0]} <->"
    assert first["subject"].startswith(expected)


@pytest.mark.slow
def test_job_unreadable_analysis_db_is_an_error_naming_the_file(tmp_path: Path) -> None:
    root = write_job(job_plan("job_balanced", 4, 3, 2), tmp_path / "in", export_type="db")
    broken = rank_dir(root, 2) / _APO / "analysis.db"
    broken.write_bytes(b"SQLite format 3\x00" + b"\x00" * 84 + b"garbage" * 100)
    code, job = _diagnose(root, tmp_path / "out")
    assert code == 3
    named = [p for p in job["ingest_problems"] if p["file"] == str(broken)]
    assert named and named[0]["severity"] == "error" and named[0]["problem"].startswith("rank 2: cannot read the file")


@pytest.mark.slow
def test_job_mixing_text_and_db_ranks_gets_the_findings_of_the_text_job(tmp_path: Path) -> None:
    plan = job_plan("job_slow_rank", 8, 5, 3)
    text = write_job(plan, tmp_path / "text")
    db = write_job(plan, tmp_path / "db", export_type="db")
    mixed = shutil.copytree(text, tmp_path / "mixed" / text.name)
    for rank in range(0, 8, 2):  # every other rank in DB form
        shutil.rmtree(rank_dir(mixed, rank))
        shutil.copytree(rank_dir(db, rank), mixed / rank_dir(db, rank).name)
    # a rank holding both forms (export_type=[text, db]) is read from its text files only, not twice
    shutil.copy(rank_dir(db, 1) / _APO / "analysis.db", rank_dir(mixed, 1) / _APO / "analysis.db")
    _, text_job = _diagnose(text, tmp_path / "out_text")
    code, mixed_job = _diagnose(mixed, tmp_path / "out_mixed")
    assert code == 0 and mixed_job["ingest_problems"] == []
    assert _findings(mixed_job) == _findings(text_job)
    assert _findings(text_job)[0][:2] == ("JOB001", f"rank {plan.slow_rank}")


@pytest.mark.slow
def test_groups_inferred_from_db_ranks_say_analysis_db_names_them(tmp_path: Path) -> None:
    root = write_job(job_plan("job_slow_rank", 4, 7, 3), tmp_path / "in", export_type="db")
    for meta in root.glob("*/profiler_metadata.json"):  # no parallel_group_info: groups are inferred
        doc = json.loads(meta.read_text())
        doc.pop("parallel_group_info")
        meta.write_text(json.dumps(doc))
    _code, job = _diagnose(root, tmp_path / "out")
    assert job["run"]["groups"].startswith("no parallel_group_info")
    assert "inferred from the ranks whose analysis.db names them" in job["run"]["groups"]
