"""dp-replica-skew on a generated pipeline job whose one data-parallel replica computes longer on every stage."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.ingest.database import connect
from analyzer.ingest.metadata.discover import discover
from analyzer.job.grouping import find_jobs
from analyzer.job.tables import load_job
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan


def _replica_ranks(root: Path, replica: int) -> list[int]:
    con = connect()
    try:
        load_job(con, find_jobs(con, discover(root), root)[0])
        rows = con.execute(
            "SELECT DISTINCT rank FROM job_groups WHERE group_kind = 'dp' AND group_rank = ? ORDER BY rank", [replica]
        ).fetchall()
    finally:
        con.close()
    return [r[0] for r in rows]


def _slow_down(root: Path, ranks: list[int], factor: float) -> None:
    """Every step of these ranks computes ``factor`` times longer (and their step grows by as much)."""
    for rank in ranks:
        (path,) = root.glob(f"rank{rank}_*/ASCEND_PROFILER_OUTPUT/step_trace_time.csv")
        with path.open(newline="") as f:
            rows = list(csv.reader(f))
        head = rows[0]
        comp, stage = head.index("Computing"), head.index("Stage")
        for row in rows[1:]:
            extra = float(row[comp]) * (factor - 1)
            row[comp], row[stage] = f"{float(row[comp]) + extra:.3f}", f"{float(row[stage]) + extra:.3f}"
        with path.open("w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(rows)


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "factor", "fires"), [(91, 1.2, True), (92, 1.05, False)])
def test_job_replica_computing_longer_on_every_stage_is_named(tmp_path, seed, factor, fires):
    root = write_job(job_plan("job_pipeline_imbalance", 16, seed, 3), tmp_path / "in")
    ranks = _replica_ranks(root, 2)
    assert len(ranks) == 4  # one rank per pipeline stage
    _slow_down(root, ranks, factor)
    main(["diagnose", str(root), "--out", str(tmp_path / "out"), "--format", "json", "--quiet"])
    d = json.loads((tmp_path / "out" / root.name / "diagnosis.json").read_text())
    found = [f for f in d["findings"] if f["rule"] == "dp-replica-skew"]
    if not fires:  # 5% longer: under min_skew
        assert found == []
        return
    (f,) = found
    assert f["subject"] == f"replica 2 (ranks {', '.join(map(str, ranks))})"
    # Only the step traces were slowed, not the other replicas' waits in communication.json: the
    # job-wait pool (the waits the files show) caps the impact, which keeps what the rule measured.
    assert f["details"].get("impact_before_overlap_us", f["impact_us"]) > 0.15 * 0.9 * 60000
    assert f["impact_us"] <= f["details"].get("impact_before_overlap_us", f["impact_us"])
    # the stage imbalance planted by the scenario stays named too: its ranks are in every replica
    assert "pipeline-stage-imbalance" in [x["rule"] for x in d["findings"]]
