"""The evaluation's jobs: every job scenario has a ground-truth entry, and a job slice scores end to end."""

from __future__ import annotations

import pytest

from fixtures.evaluate.__main__ import main
from fixtures.generator.ground_truth import load_ground_truth
from fixtures.generator.job_layout import truth
from fixtures.generator.job_scenarios import JOB_SCENARIOS, job_plan

TRUTH = load_ground_truth()


def test_every_job_scenario_but_the_benchmark_one_is_in_the_matrix() -> None:
    assert set(TRUTH.job_problems) == set(JOB_SCENARIOS) - {"job_large"}
    assert len(TRUTH.job_ranks) >= 3


@pytest.mark.parametrize("problem", TRUTH.job_problems)
@pytest.mark.parametrize("ranks", TRUTH.job_ranks)
def test_job_expectation_names_what_was_planted(problem: str, ranks: int) -> None:
    planted = truth(job_plan(problem, ranks, 0))
    exp = TRUTH.job_expectation(problem, planted)
    if problem in ("job_balanced", "job_replica_near_miss"):
        assert exp.expect == () and exp.subject == () and not exp.first
        return
    assert exp.expect and exp.first and exp.subject
    assert all("{" not in w and "None" not in w for w in exp.subject), exp.subject


@pytest.mark.slow
def test_evaluate_job_slice_finds_the_slow_replica_and_not_the_near_miss(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--problems", "job_replica_skew", "job_replica_near_miss", "--ranks", "8", "--seed", "4"]
    assert main([*argv, "--misses"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Jobs, seed 4, ranks 8: 2 jobs."
    assert lines[2].split()[:3] == ["job", "problem", "jobs"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:] if line.strip()}
    assert rows["job_replica_skew"] == ["1", "1/1", "100%", "1/1", "100%", "1/1", "100%", "0", "0"]
    assert rows["job_replica_near_miss"] == ["1", "–", "–", "–", "0", "0"]
    assert rows["dp-replica-skew"] == ["1/1", "100%", "1/1", "100%", "1/1", "100%", "0", "0"]
    assert lines[-1] == "no misses"


def test_evaluate_job_ranks_a_scenario_cannot_take_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--problems", "job_slow_link", "--ranks", "8"]) == 2
    assert "--ranks 8: job_slow_link needs two nodes" in capsys.readouterr().err
