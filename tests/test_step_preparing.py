"""The host's time before each step's first task, which the export gives apart from the step (torch_npu's
Preparing, msprof's Data Aug Bound): in the summary, not in the span; absent where the step's window holds it."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from analyzer.cli import main
from fixtures.generator import write_export


def _summary(root: Path, out: Path) -> dict:
    assert main(["diagnose", str(root), "--out", str(out), "--format", "json,md", "--quiet"]) == 0
    (page,) = out.glob("*/diagnosis.json")
    return json.loads(page.read_text())["summary"]


def _column_mean(path: Path, column: str) -> float:
    with path.open(newline="") as fh:
        values = [float(r[column]) for r in csv.DictReader(fh) if r[column] != "N/A"]
    return sum(values) / len(values)


@pytest.mark.slow
def test_torch_npu_preparing_is_the_mean_of_its_column_and_not_in_the_span(tmp_path):
    (root,) = write_export("host_sync_low_util", tmp_path / "in", layout="torch_npu", seed=5, steps=3)
    (trace,) = root.rglob("step_trace_time.csv")
    summary = _summary(root, tmp_path / "out")
    assert summary["step_preparing_us"] == pytest.approx(_column_mean(trace, "Preparing"), abs=0.001)
    assert summary["span_us"] == pytest.approx(_column_mean(trace, "Stage") * 3, abs=0.01)
    (md,) = (tmp_path / "out").glob("*/diagnosis.md")
    assert (
        f"| preparing per step | {summary['step_preparing_us']:,.3f} us before the step's first task, not in the step "
        "(mean) |" in (md.read_text())
    )


@pytest.mark.slow
def test_msprof_data_aug_bound_is_the_preparing_of_its_steps(tmp_path):
    """msprof measures a step from its first task (FP Start): the time since the previous iteration's end
    (Data Aug Bound, N/A for the first) is apart from it."""
    (root,) = write_export("memory_leak", tmp_path / "in", layout="msprof", seed=5)
    (trace,) = root.rglob("step_trace_*.csv")
    assert _summary(root, tmp_path / "out")["step_preparing_us"] == pytest.approx(
        _column_mean(trace, "Data Aug Bound(us)"), abs=0.001
    )


@pytest.mark.slow
def test_steps_from_the_timeline_alone_hold_their_preparing(tmp_path):
    """Near miss: without step_trace_time.csv the steps are the ProfilerStep markers' windows, whose time before
    the first task is the breakdown's free time: no separate preparing."""
    (root,) = write_export("host_sync_low_util", tmp_path / "in", layout="torch_npu", seed=5, steps=3)
    (trace,) = root.rglob("step_trace_time.csv")
    trace.unlink()
    shutil.rmtree(root / "ASCEND_PROFILER_OUTPUT" / "analysis.db", ignore_errors=True)
    summary = _summary(root, tmp_path / "out")
    assert summary["step_preparing_us"] is None
    free_before = {p["part"]: p["us"] for p in summary["breakdown"]["parts"]}["free_before"]
    assert free_before > 0
