"""Job numbers pinned with their units: what the rank files say, as the job tables and findings give it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.ingest.metadata.discover import discover
from analyzer.job.grouping import find_jobs
from analyzer.job.metrics import link_metrics, rank_metrics
from analyzer.job.tables import load_job
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan


@pytest.fixture(scope="module")
def slow_link(tmp_path_factory) -> Path:
    """16 ranks on two nodes, two steps; the RDMA link between ranks 7 and 8 runs at 3 of its 12 GB/s."""
    return write_job(job_plan("job_slow_link", 16, 0, 2), tmp_path_factory.mktemp("job"))


def _file_rows(root: Path, name: str) -> list[dict]:
    """Every link entry of every rank's ``name`` file: its numbers as the file writes them."""
    rows = []
    for path in sorted(root.glob(f"rank*/ASCEND_PROFILER_OUTPUT/{name}")):
        for step in json.loads(path.read_text()).values():
            for ops in step.values():
                for op in ops.values():
                    links = op.get("Communication Bandwidth Info", op)
                    rows += [v for v in links.values() if isinstance(v, dict) and v.get("Transit Size(MB)")]
    return rows


def _sums(rows: list[dict]) -> tuple[int, float, float, float]:
    return (
        len(rows),
        round(sum(r["Transit Size(MB)"] for r in rows), 3),
        round(sum(r["Transit Time(ms)"] for r in rows) * 1000, 3),
        round(sum(r["Bandwidth(GB/s)"] for r in rows), 3),
    )


_TABLE_SUMS = (
    "SELECT count(*), round(sum(transit_size_mb), 3), round(sum(transit_us), 3), round(sum(bandwidth_gb_per_s), 3) "
    "FROM {}"
)


def test_pins_job_link_numbers_keep_the_units_of_the_rank_files(slow_link, con):
    # Transit times are written in ms and stored in us; bandwidths are GB/s in both.
    load_job(con, find_jobs(con, discover(slow_link), slow_link)[0])
    summary = _file_rows(slow_link, "communication.json")
    matrix = _file_rows(slow_link, "communication_matrix.json")
    assert summary and matrix
    assert con.execute(_TABLE_SUMS.format("job_comm_bandwidth")).fetchone() == _sums(summary)
    assert con.execute(_TABLE_SUMS.format("job_links WHERE transit_size_mb > 0")).fetchone() == _sums(matrix)
    slow = "SELECT DISTINCT round(bandwidth_gb_per_s, 3) FROM {} WHERE rank = 7 AND transport = 'RDMA'"
    assert con.execute(slow.format("job_comm_bandwidth")).fetchall() == [(3.0,)]


@pytest.mark.slow
def test_pins_job_slow_link_finding_gives_its_numbers_in_gb_per_s(slow_link, tmp_path):
    main(["diagnose", str(slow_link), "--out", str(tmp_path), "--format", "json"])
    d = json.loads((tmp_path / "job_slow_link" / "diagnosis.json").read_text())
    first = d["findings"][0]
    assert first["subject"] == "rank 7 <-> rank 8 (RDMA)"
    assert first["value"] == pytest.approx(3.0)
    # 660 MB a step at 3 GB/s is 220 ms; at the 12 GB/s of the other links it would take a quarter of that
    assert first["impact_us"] == pytest.approx(165000.0)
    assert first["message"].startswith("rank 7 <-> rank 8 (RDMA): 3.00 GB/s against 12.00 GB/s (the median of")
    assert first["message"].endswith("moving 660.0 MB per step")


def test_pins_job_metrics_are_per_step_and_in_gb_per_s(slow_link, con):
    load_job(con, find_jobs(con, discover(slow_link), slow_link)[0])
    (job,) = con.execute("SELECT DISTINCT run_id FROM job_links").fetchone()
    links = {(r["rank_a"], r["rank_b"], r["transport"]): r for r in link_metrics(con, job, "j").to_pylist()}
    slow = links[(7, 8, "RDMA")]
    assert (round(slow["bandwidth_gb_per_s"], 6), round(slow["transit_size_mb"], 6)) == (3.0, 660.0)
    assert slow["transit_us"] == pytest.approx(220000.0)  # 660 MB at 3 GB/s, a step
    waits = {}
    for path in sorted(slow_link.glob("rank*/ASCEND_PROFILER_OUTPUT/communication.json")):
        rank = int(path.parts[-3].removeprefix("rank").split("_")[0])
        steps = json.loads(path.read_text())
        total = sum(
            op["Communication Time Info"]["Wait Time(ms)"] * 1000
            for step in steps.values()
            for ops in step.values()
            for op in ops.values()
        )
        waits[rank] = round(total / len(steps), 3)
    assert {r["rank"]: round(r["wait_us"], 3) for r in rank_metrics(con, job, "j").to_pylist()} == waits
