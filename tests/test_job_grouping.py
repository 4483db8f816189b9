"""Which exports form one job: jobs that share world size and timestamps are told apart by layout and folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.ingest.metadata.discover import discover
from analyzer.job.grouping import find_jobs
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan


def _jobs(con, root: Path) -> list[tuple[str, list[int], list[str]]]:
    """(job id, ranks, problem texts) of every job found under ``root``."""
    return [
        (j.job_id, [r.rank for r in j.ranks], [p.problem for p in j.problems])
        for j in find_jobs(con, discover(root), root.resolve())
    ]


def _one_folder(root: Path, jobs: dict[str, Path]) -> Path:
    """Every rank folder of the jobs moved into ``root``, its name prefixed by its job's key."""
    root.mkdir()
    for key, job in jobs.items():
        for rank_folder in sorted(job.glob("rank*_ascend_pt")):
            shutil.move(rank_folder, root / f"{key}_{rank_folder.name}")
    return root


@pytest.mark.slow
def test_job_grouping_two_jobs_of_one_size_and_clock_in_two_folders_are_two_jobs(tmp_path):
    # Same scenario, size and timestamps: only the folders (and what the ranks did) differ.
    first = write_job(job_plan("job_slow_rank", 8, 1, 2), tmp_path / "in", "job_a")
    second = write_job(job_plan("job_slow_rank", 8, 2, 2), tmp_path / "in", "job_b")
    truths = {p.name: json.loads((p / "job_truth.json").read_text())["slow_rank"] for p in (first, second)}
    assert truths == {"job_a": 2, "job_b": 7}
    main(["diagnose", str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--format", "json", "--quiet"])
    found = {}
    for page in sorted((tmp_path / "out").glob("*/diagnosis.json")):
        d = json.loads(page.read_text())
        assert d["run"]["scope"] == "job" and d["ingest_problems"] == []
        assert [r["rank"] for r in d["run"]["ranks"]] == list(range(8))
        assert {Path(r["source_path"]).parts[0] for r in d["run"]["ranks"]} == {d["run_id"]}
        found[d["run_id"]] = d["findings"][0]["subject"]
    assert found == {"job_a": "rank 2", "job_b": "rank 7"}


def test_job_grouping_one_job_over_a_folder_per_node_stays_one_job(con, tmp_path):
    job = write_job(job_plan("job_slow_link", 16, 3, 1), tmp_path / "in")
    for rank_folder in sorted(job.glob("rank*_ascend_pt")):
        node = int(rank_folder.name.split("_")[0].removeprefix("rank")) // 8
        (job / f"node{node}").mkdir(exist_ok=True)
        shutil.move(rank_folder, job / f"node{node}" / rank_folder.name)
    assert _jobs(con, tmp_path / "in") == [("job_slow_link", list(range(16)), [])]


def test_job_grouping_two_layouts_in_one_folder_are_two_jobs(con, tmp_path):
    jobs = {
        "dp": write_job(job_plan("job_balanced", 8, 4, 1), tmp_path / "gen"),
        "pp": write_job(job_plan("job_pipeline_imbalance", 8, 4, 1), tmp_path / "gen"),
    }
    root = _one_folder(tmp_path / "in", jobs)
    found = _jobs(con, root)
    assert [(ranks, problems) for _, ranks, problems in found] == [(list(range(8)), [])] * 2
    assert len({job_id for job_id, _, _ in found}) == 2


def test_job_grouping_two_jobs_mixed_in_one_folder_names_each_repeated_rank(con, tmp_path):
    jobs = {
        "a": write_job(job_plan("job_slow_rank", 4, 1, 1), tmp_path / "gen", "a"),
        "b": write_job(job_plan("job_slow_rank", 4, 2, 1), tmp_path / "gen", "b"),
    }
    root = _one_folder(tmp_path / "in", jobs)
    ((_, ranks, problems),) = _jobs(con, root)
    assert ranks == [0, 1, 2, 3] and len(problems) == 4
    assert problems[0].startswith(
        "rank 0 appears twice in one job, here and in a_rank0_20250101000000000_ascend_pt (their world size"
    )


def test_job_grouping_jobs_in_folders_of_one_name_get_distinct_ids(con, tmp_path):
    for parent in ("a", "b", "c"):
        write_job(job_plan("job_balanced", 4, 1, 1), tmp_path / "in" / parent, "job")
    assert [job_id for job_id, _, _ in _jobs(con, tmp_path / "in")] == ["job", "job-job", "job-job2"]


def test_job_grouping_a_stray_copy_of_one_rank_in_a_folder_of_its_own_is_named(con, tmp_path):
    job = write_job(job_plan("job_slow_rank", 4, 1, 1), tmp_path / "in", "job")
    stray = tmp_path / "in" / "other"
    stray.mkdir()
    shutil.copytree(next(job.glob("rank2_*_ascend_pt")), stray / "rank2_copy_ascend_pt")
    ((job_id, ranks, problems),) = _jobs(con, tmp_path / "in")
    assert (job_id, ranks) == ("job", [0, 1, 2, 3])
    assert problems == [
        "rank 2 repeats a rank of a job beside it, but its folder or parallel layout is of no other rank: "
        "it is left out of every job view (a job needs two ranks)"
    ]
