"""A job's diagnosis looks at the helper views (rule_engine.runner.build_views) only where its tables may have
changed since: once for the job's rules and once for its ranks', not again for the rules that follow."""

from __future__ import annotations

from pathlib import Path

import pytest

import analyzer
from analyzer.rule_engine import runner
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan


@pytest.mark.slow
def test_the_helper_views_are_looked_at_once_per_pass_over_the_tables(tmp_path: Path, monkeypatch):
    job = write_job(job_plan("job_slow_rank", ranks=4, seed=11), tmp_path / "job", kernels=5)
    looks: list[int] = []
    usual = runner.create_views
    monkeypatch.setattr(runner, "create_views", lambda con, *args: looks.append(1) or usual(con, *args))
    with analyzer.load(job) as trace:
        diagnoses = analyzer.diagnose_all(trace)
    # diagnose_job before its rules; diagnose_many before the ranks' (neither the job's run_rules nor the
    # rules comparing the runs again)
    assert len(looks) == 2
    assert len(diagnoses) == 1 + 4 and diagnoses[0].run["scope"] == "job"
