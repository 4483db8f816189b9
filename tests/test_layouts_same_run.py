"""One generated run written as text and as SQLite holds the same steps and gets the same findings: the seed
describes one run, whatever the form (torch_npu's DB form carries the steps' decomposition in analysis.db, as
step_trace_time.csv does; msprof's DB form, like its text form, knows no steps outside graph mode). So does a
generated job: its ranks' analysis.db hold the numbers of their step_trace_time.csv and communication JSONs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import analyzer
from analyzer.cli import main
from fixtures.generator import write_export
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan

_STEPS = "SELECT * EXCLUDE (run_id, source) FROM steps ORDER BY step_id"  # source: the file it came from


def _read(root: Path) -> tuple[list[tuple], dict[str, float]]:
    with analyzer.load(root) as trace:
        steps = trace.con.execute(_STEPS).fetchall()
        found = analyzer.diagnose(trace).findings
    return steps, {f.code: round(f.impact_us, 3) for f in found if f.code in ("SCH001", "CMP001")}


# the reported case in the fast loop; msprof's in the full suite
@pytest.mark.slow
@pytest.mark.parametrize("layout", ["torch_npu", pytest.param("msprof", marks=pytest.mark.slow)])
def test_text_and_db_forms_of_one_seed_hold_the_same_steps_and_amounts(tmp_path: Path, layout: str) -> None:
    got = {}
    for form in ("text", "db"):
        (root,) = write_export(
            "host_sync_low_util", tmp_path / form, layout=layout, export_type=form, seed=515, steps=3, layers=4
        )
        got[form] = _read(root)
    assert got["text"] == got["db"]
    steps, amounts = got["db"]
    assert set(amounts) == {"SCH001", "CMP001"}
    assert len(steps) == (3 if layout == "torch_npu" else 0)


def _job_findings(root: Path, out: Path) -> list[tuple]:
    assert main(["diagnose", str(root), "--out", str(out), "--format", "json", "--quiet"]) == 0
    job = json.loads((out / root.name / "diagnosis.json").read_text())
    assert job["ingest_problems"] == []
    return [(f["code"], f["subject"], f["severity"], f["impact_us"], f["message"]) for f in job["findings"]]


# the slow rank in the fast loop; the slow link in the full suite
@pytest.mark.slow
@pytest.mark.parametrize(
    ("scenario", "ranks"), [("job_slow_rank", 8), pytest.param("job_slow_link", 16, marks=pytest.mark.slow)]
)
def test_text_and_db_forms_of_one_job_get_the_same_job_findings(tmp_path: Path, scenario: str, ranks: int) -> None:
    plan = job_plan(scenario, ranks, 515, 3)
    got = {
        form: _job_findings(write_job(plan, tmp_path / form, export_type=form), tmp_path / f"out_{form}")
        for form in ("text", "db")
    }
    assert got["text"] == got["db"]
    assert got["db"][0][0] == ("JOB001" if scenario == "job_slow_rank" else "JOB002")
