"""Jobs on hostile data, through `diagnose` and `batch`: damaged numbers in any job file of any rank, two
sessions in one folder, a rank deleted, apart (clock, end_info, world size) or copied astray."""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from analyzer.cli import main
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan
from tests.job_files import rank_dir, spoil

# The whole command over generated inputs: in the full suite, not the fast loop.
pytestmark = pytest.mark.slow

# Seeds the job code was not developed against.
SEEDS = (23, 41)


def _diagnose(root: Path, out: Path) -> tuple[int, list[dict]]:
    code = main(["diagnose", str(root), "--out", str(out), "--format", "json", "--quiet"])
    found = [json.loads(p.read_text()) for p in sorted(out.glob("*/diagnosis.json"))]
    return code, [d for d in found if d["run"].get("scope") == "job"]


# (scenario, file, field, value, whose file: 'culprit' (the planted rank, or a rank of the slow link / stage) or
# 'other', how many values (0: every one of the file))
_ATTACKS = [
    ("job_slow_rank", "communication.json", "Wait Time(ms)", "NaN", "other", 1),
    ("job_slow_rank", "communication.json", "Wait Time(ms)", "NaN", "culprit", 2),
    ("job_slow_rank", "communication.json", "Wait Time(ms)", "-50", "other", 0),
    ("job_slow_rank", "communication.json", "Transit Time(ms)", '"abc"', "other", 3),
    ("job_slow_rank", "step_trace_time.csv", "Computing", "abc", "culprit", 1),
    ("job_slow_rank", "step_trace_time.csv", "Computing", "NaN", "other", 1),
    ("job_slow_rank", "step_trace_time.csv", "Stage", "1e15", "other", 1),
    ("job_slow_rank", "step_trace_time.csv", "Free", "-3", "culprit", 1),
    ("job_slow_link", "communication_matrix.json", "Transit Time(ms)", "NaN", "culprit", 4),
    ("job_slow_link", "communication_matrix.json", "Transit Size(MB)", "-1", "other", 0),
    ("job_slow_link", "communication_matrix.json", "Bandwidth(GB/s)", '"fast"', "culprit", 2),
    ("job_pipeline_imbalance", "step_trace_time.csv", "Stage", "1e15", "other", 1),
    ("job_pipeline_imbalance", "step_trace_time.csv", "Computing", "Infinity", "culprit", 1),
]
_SUBJECT = {
    "job_slow_rank": lambda t: f"rank {t['slow_rank']}",
    "job_slow_link": lambda t: f"rank {t['slow_link'][0]} <-> rank {t['slow_link'][1]} (RDMA)",
    "job_pipeline_imbalance": lambda t: f"stage {t['slow_stage']} ",
}


def _culprits(truth: dict) -> list[int]:
    if truth["slow_rank"] is not None:
        return [truth["slow_rank"]]
    if truth["slow_link"]:
        return list(truth["slow_link"])
    per_stage = truth["ranks"] // truth["pp"]
    return list(range(truth["slow_stage"] * per_stage, (truth["slow_stage"] + 1) * per_stage))


@pytest.mark.parametrize(("scenario", "name", "field", "value", "whose", "count"), _ATTACKS)
def test_job_damaged_value_leaves_the_verdict_right_and_names_the_value(
    tmp_path, scenario, name, field, value, whose, count
):
    seed = SEEDS[0] + 2 * _ATTACKS.index((scenario, name, field, value, whose, count))  # a seed of its own
    ranks = 16 if scenario == "job_slow_link" else 8
    root = write_job(job_plan(scenario, ranks, seed, 3), tmp_path / "in")
    truth = json.loads((root / "job_truth.json").read_text())
    pick = random.Random(seed)
    culprits = _culprits(truth)
    rank = pick.choice(culprits if whose == "culprit" else [r for r in range(ranks) if r not in culprits])
    spoilt = rank_dir(root, rank) / "ASCEND_PROFILER_OUTPUT" / name
    spoil(spoilt, field, value, count)
    code, (d,) = _diagnose(root, tmp_path / "out")
    assert code == 0
    named = [p for p in d["ingest_problems"] if p["file"] == str(spoilt)]
    assert named and all(p["severity"] == "warning" and f"rank {rank}: " in p["problem"] for p in named)
    assert any(f"{field!r}" in p["problem"] for p in named), named
    first = d["findings"][0]
    assert first["subject"].startswith(_SUBJECT[scenario](truth)), (first["subject"], named)
    assert first["severity"] == "warning"
    if scenario == "job_slow_rank":
        assert first["message"].split("Cause: ")[1].startswith(truth["slow_cause"])
        assert first["confidence"] == "low" and "[unreliable: " in first["message"]
    assert "None" not in first["message"]


def _sessions(tmp_path: Path, seeds: tuple[int, int], apart_s: int) -> tuple[Path, list[int]]:
    """Two sessions of an 8-rank job written into one folder, their collections ending ``apart_s`` apart."""
    root = write_job(job_plan("job_slow_rank", 8, seeds[0], 2), tmp_path / "in", "job")
    other = write_job(job_plan("job_slow_rank", 8, seeds[1], 2), tmp_path / "gen", "job")
    slow = [json.loads((r / "job_truth.json").read_text())["slow_rank"] for r in (root, other)]
    for folder in sorted(other.glob("rank*_ascend_pt")):
        info = next(folder.glob("profiler_info_*.json"))
        doc = json.loads(info.read_text())
        doc["end_info"]["collectionTimeEnd"] += apart_s * 10**9
        info.write_text(json.dumps(doc))
        shutil.move(folder, root / folder.name.replace("_2025010100", "_2025010101"))
    return root, slow


def test_job_two_sessions_in_one_folder_are_two_jobs_each_with_its_slow_rank(tmp_path):
    root, slow = _sessions(tmp_path, (29, 31), 60)
    assert slow[0] != slow[1]
    code, jobs = _diagnose(root, tmp_path / "out")
    assert code == 0 and len(jobs) == 2
    for d in jobs:
        assert [r["rank"] for r in d["run"]["ranks"]] == list(range(8)) and d["ingest_problems"] == []
    firsts = {d["findings"][0]["subject"] for d in jobs}
    assert firsts == {f"rank {slow[0]}", f"rank {slow[1]}"}


@pytest.mark.slow
def test_job_batch_keeps_two_sessions_apart_and_records_no_failure(tmp_path):
    root, slow = _sessions(tmp_path, (29, 31), 60)
    catalog = tmp_path / "catalog.duckdb"
    assert main(["batch", str(root), "--catalog", str(catalog), "--jobs", "1"]) == 0
    con = duckdb.connect(str(catalog), read_only=True)
    assert con.execute("SELECT count(*) FROM failures").fetchall() == [(0,)]
    assert con.execute("SELECT rank_count FROM catalog_jobs ORDER BY job_id").fetchall() == [(8,), (8,)]
    subjects = con.execute("SELECT subject FROM job_findings WHERE position = 1").fetchall()
    assert sorted(s for (s,) in subjects) == sorted(f"rank {r}" for r in slow)


@pytest.mark.parametrize("seed", SEEDS)
def test_job_deleted_slow_rank_is_named_with_the_wait_it_leaves_exit_3(tmp_path, seed):
    root = write_job(job_plan("job_slow_rank", 8, seed, 2), tmp_path / "in")
    slow = json.loads((root / "job_truth.json").read_text())["slow_rank"]
    shutil.rmtree(rank_dir(root, slow))
    code, (d,) = _diagnose(root, tmp_path / "out")
    assert code == 3
    (lost,) = [p for p in d["ingest_problems"] if p["severity"] == "error"]
    assert lost["problem"].startswith(
        f"1 of the 8 ranks the job implies (world size 8) have no export here: rank(s) {slow};"
    )
    assert re.search(r"every present rank waits at least [\d.]+ ms per step \(1\d%", lost["problem"]), lost


@pytest.mark.parametrize(
    ("how", "form"),
    [("clock 700 s off", "text"), ("no end_info", "text"), ("world size 16", "text"), ("clock 700 s off", "db")],
)
def test_job_rank_standing_apart_joins_its_job_with_the_reason(tmp_path, how, form):
    """In either form: the collectives of the db form are its analysis.db's tables."""
    root = write_job(job_plan("job_slow_rank", 8, SEEDS[0], 2), tmp_path / "in", export_type=form)
    slow = json.loads((root / "job_truth.json").read_text())["slow_rank"]
    folder = rank_dir(root, slow)
    name = "profiler_metadata.json" if how == "world size 16" else f"profiler_info_{slow}.json"
    doc = json.loads((folder / name).read_text())
    if how == "clock 700 s off":
        doc["end_info"]["collectionTimeEnd"] += 700 * 10**9
    elif how == "no end_info":
        del doc["end_info"]
    else:
        doc["distributed_args"]["world_size"] = 16
    (folder / name).write_text(json.dumps(doc))
    code, (d,) = _diagnose(root, tmp_path / "out")
    assert code == 0 and [r["rank"] for r in d["run"]["ranks"]] == list(range(8))
    (note,) = d["ingest_problems"]
    assert note["problem"].startswith(f"rank {slow} is taken into this job, the only one lacking rank {slow}")
    reason = {"clock 700 s off": "ended 700 s from", "no end_info": "no end of collection", "world size 16": "16"}
    assert reason[how] in note["problem"]
    assert d["findings"][0]["subject"] == f"rank {slow}"


def test_job_rank_standing_apart_without_collectives_in_its_analysis_db_stays_apart(tmp_path):
    """The near miss of the db form: the rank whose analysis.db holds no collective table is a run of its own, and
    the job lacks it (exit 3)."""
    import sqlite3

    root = write_job(job_plan("job_slow_rank", 8, SEEDS[0], 2), tmp_path / "in", export_type="db")
    slow = json.loads((root / "job_truth.json").read_text())["slow_rank"]
    folder = rank_dir(root, slow)
    info = folder / f"profiler_info_{slow}.json"
    doc = json.loads(info.read_text())
    doc["end_info"]["collectionTimeEnd"] += 700 * 10**9
    info.write_text(json.dumps(doc))
    (db,) = folder.rglob("analysis.db")
    with sqlite3.connect(db) as conn:
        for table in ("CommAnalyzerTime", "CommAnalyzerBandwidth", "CommAnalyzerMatrix"):
            conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.close()
    code, (d,) = _diagnose(root, tmp_path / "out")
    assert code == 3 and slow not in [r["rank"] for r in d["run"]["ranks"]]
    assert not [p for p in d["ingest_problems"] if "is taken into this job" in p["problem"]]


def test_job_stray_copy_of_a_rank_in_a_node_folder_does_not_cut_the_job_in_two(tmp_path):
    root = write_job(job_plan("job_slow_rank", 8, SEEDS[1], 2), tmp_path / "in")
    slow = json.loads((root / "job_truth.json").read_text())["slow_rank"]
    for rank in range(8):
        folder = rank_dir(root, rank)
        (root / f"node{rank // 4}").mkdir(exist_ok=True)
        shutil.move(folder, root / f"node{rank // 4}" / folder.name)
    copy = next((root / "node0").glob("rank3_*"))
    shutil.copytree(copy, root / "node1" / copy.name)
    code, (d,) = _diagnose(root, tmp_path / "out")
    assert code == 0 and [r["rank"] for r in d["run"]["ranks"]] == list(range(8))
    assert [p["file"] for p in d["ingest_problems"]] == [f"node1/{copy.name}"]
    assert d["findings"][0]["subject"] == f"rank {slow}"


@pytest.mark.slow
def test_job_batch_records_a_cut_communication_json_and_exits_3_as_diagnose_does(tmp_path):
    root = write_job(job_plan("job_slow_rank", 4, SEEDS[0], 1), tmp_path / "in")
    cut = rank_dir(root, 1) / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    cut.write_text(cut.read_text()[:300])
    catalog = tmp_path / "catalog.duckdb"
    assert main(["batch", str(root.parent), "--catalog", str(catalog), "--jobs", "1"]) == 3
    con = duckdb.connect(str(catalog), read_only=True)
    rows = con.execute("SELECT file, severity FROM job_problems").fetchall()
    assert (str(cut), "error") in rows


def test_job_slow_rank_whose_every_wait_is_damaged_is_named_as_the_one_the_others_wait_for(tmp_path):
    """No verdict can see a rank without a sound wait: the wait it leaves unexplained names it."""
    root = write_job(job_plan("job_slow_rank", 8, SEEDS[1] + 100, 2), tmp_path / "in")
    slow = json.loads((root / "job_truth.json").read_text())["slow_rank"]
    spoil(rank_dir(root, slow) / "ASCEND_PROFILER_OUTPUT" / "communication.json", "Wait Time(ms)", '"n/a"')
    code, (d,) = _diagnose(root, tmp_path / "out")
    assert code == 0 and not [f for f in d["findings"] if f["rule"] == "slow-rank"]
    (note,) = [p for p in d["ingest_problems"] if p["location"] == "collectives"]
    assert f"rank(s) {slow}, whose waits were dropped" in note["problem"] and note["severity"] == "warning"


def test_job_partial_copy_of_another_job_in_a_folder_of_its_own_is_a_job_of_its_own(con, tmp_path):
    """Parts sharing most of their ranks are two jobs, however small one is (the stray-copy rule is for few)."""
    from analyzer.ingest.metadata.discover import discover
    from analyzer.job.grouping import find_jobs

    write_job(job_plan("job_slow_rank", 8, SEEDS[0], 1), tmp_path / "in", "a")
    b = write_job(job_plan("job_slow_rank", 8, SEEDS[1], 1), tmp_path / "in", "b")
    for rank in range(3, 8):
        shutil.rmtree(rank_dir(b, rank))
    jobs = find_jobs(con, discover(tmp_path / "in"), (tmp_path / "in").resolve())
    assert [(j.job_id, [r.rank for r in j.ranks]) for j in jobs] == [("a", list(range(8))), ("b", [0, 1, 2])]


def _rank_named_only(rank: Path, name: str) -> Path:
    """The rank's export with its rank in its folder ``name`` only: the metadata's rank fields dropped."""
    meta = rank / "profiler_metadata.json"
    doc = json.loads(meta.read_text())
    del doc["distributed_args"]["rank"]
    meta.write_text(json.dumps(doc))
    (info,) = rank.glob("profiler_info_*.json")
    doc = json.loads(info.read_text())
    del doc["rank_id"]
    info.write_text(json.dumps(doc))
    return rank.rename(rank.with_name(name))


@pytest.mark.parametrize("name", ["rank99999999999_ascend_pt", "rank1_ascend_pt"])
def test_job_rank_number_of_a_folder_name_beyond_an_integer_names_no_rank(tmp_path, capsys, name):
    """A rank's export without a rank in its metadata, whose folder name holds a number too large for an INTEGER:
    the number names no rank, as a rank in the metadata read as an INTEGER, so the export is a run of its own and
    the job is missing rank 1 (exit 3), every report written. The near miss: in 'rank1_ascend_pt' it joins."""
    root = write_job(job_plan("job_slow_rank", 4, SEEDS[0], 2), tmp_path / "in", kernels=3)
    _rank_named_only(rank_dir(root, 1), name)
    code, (d,) = _diagnose(root, tmp_path / "out")
    captured = capsys.readouterr()
    assert "internal error" not in captured.err
    reports = sorted(p.parent.name for p in (tmp_path / "out").glob("*/diagnosis.json"))
    assert name in reports and len(reports) == 5  # the job and its 4 exports, each a report
    missing = [p for p in d["ingest_problems"] if "have no export here: rank(s) 1;" in p["problem"]]
    assert (code, len(missing)) == ((3, 1) if name.startswith("rank9") else (0, 0)), (code, d["ingest_problems"])
