"""diagnose on the real torch_npu exports in ../shared/real (skipped when that folder is absent)."""

from __future__ import annotations

import json

import pytest

from analyzer.cli import main
from analyzer.ingest.readers import READERS


def _diagnose(real_dir, out, name, *extra):
    code = main(["diagnose", str(real_dir / name), "--out", str(out), *extra])
    return code, json.loads((out / name / "diagnosis.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def level1(real_dir, tmp_path_factory):
    if "step_trace_time" not in READERS:
        pytest.skip("the step_trace_time.csv reader is not registered yet, so there is no step 50 decomposition")
    out = tmp_path_factory.mktemp("level1")
    code, doc = _diagnose(real_dir, out, "torch_npu_level1_rank0_text", "--fail-on", "critical")
    return code, doc, out


@pytest.fixture(scope="module")
def level0(real_dir, tmp_path_factory):
    return [_diagnose(real_dir, tmp_path_factory.mktemp("level0"), "torch_npu_level0_rank0_text") for _ in range(2)]


def test_diagnose_level1_top_finding_is_step_50_comm_not_overlapped_while_computing_6_5pct(level1):
    _, doc, out = level1
    top = doc["findings"][0]
    assert (top["rule"], top["subject"]) == ("communication-not-overlapped", "step 50")
    assert top["value"] == pytest.approx(101963.203 / 136581.0, abs=1e-4)
    assert "74.7% of the step (101963.203 of 136581.000 us" in top["message"]
    assert "the device computed during 6.5% of it" in top["message"]
    assert doc["summary"]["computing_ratio"] == pytest.approx(8873.756 / 136581.0, abs=1e-4)
    assert (out / "torch_npu_level1_rank0_text" / "diagnosis.md").is_file()


def test_diagnose_level1_low_utilization_keeps_what_the_idle_parts_leave(level1):
    _, doc, _ = level1
    low = next(f for f in doc["findings"] if f["rule"] == "low-aicore-utilization")
    idle = [f for f in doc["findings"] if f["rule"] in ("communication-not-overlapped", "inter-op-gap")]
    assert low["subject"] == "step 50" and "6.5%" in low["message"]
    assert low["details"]["impact_before_overlap_us"] == pytest.approx(136581.0 - 8873.756, abs=1e-3)
    assert low["impact_us"] + sum(f["impact_us"] for f in idle) == pytest.approx(136581.0 - 8873.756, abs=1e-3)


def test_diagnose_level0_pmu_rules_skipped_with_setting(level0):
    code, doc = level0[0]
    mte = next(o for o in doc["completeness"] if o["rule"] == "mte-share-high")
    assert code == 0
    assert mte["status"] == "skipped"
    assert "ops.mte_time_us" in mte["reason"]
    assert "aic_metrics=AiCMetrics.PipeUtilization" in mte["enable_hint"]
    assert any("aic_metrics=AiCMetrics.PipeUtilization" in n for n in doc["run"]["not_collected"])


def test_diagnose_level1_fail_on_critical_exits_1(level1):
    assert level1[0] == 1


def test_diagnose_level0_twice_same_json(level0):
    assert level0[0][1] == level0[1][1]


def test_diagnose_out_inside_export_exits_2(real_dir):
    export = real_dir / "torch_npu_level0_rank0_text"
    assert main(["diagnose", str(export), "--out", str(export / "reports")]) == 2
    assert not (export / "reports").exists()
