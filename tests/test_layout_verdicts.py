"""The same run exported in both layouts (torch_npu and msprof) gets the same warnings, each of the same
severity (issue 45): severity is the rule's condition, not what other findings left of its impact."""

from __future__ import annotations

import json
import re

import pytest

from analyzer.cli import main


def _warnings(root, out) -> list[tuple[str, str]]:
    assert main(["diagnose", str(root), "--out", str(out), "--format", "json", "--quiet"]) == 0
    (page,) = out.glob("*/diagnosis.json")
    return sorted(
        (f["rule"], f["severity"]) for f in json.loads(page.read_text())["findings"] if f["severity"] != "info"
    )


@pytest.mark.slow
@pytest.mark.parametrize(("scenario", "seed"), [("host_sync_low_util", 83)])
def test_both_layouts_of_one_run_get_the_same_warnings(tmp_path, scenario, seed):
    from fixtures.generator import write_export

    got = {}
    for layout in ("torch_npu", "msprof"):
        (root,) = write_export(scenario, tmp_path / layout, layout=layout, seed=seed, steps=3)
        got[layout] = _warnings(root, tmp_path / f"out-{layout}")
    assert got["torch_npu"] == got["msprof"]
    assert ("low-aicore-utilization", "warning") in got["msprof"]


def _host_sync_gaps_us(root, out) -> float:
    """The time inter-op-gap gives gaps with a host synchronize inside."""
    assert main(["diagnose", str(root), "--out", str(out), "--format", "json", "--quiet"]) == 0
    (page,) = out.glob("*/diagnosis.json")
    (gaps,) = [f for f in json.loads(page.read_text())["findings"] if f["rule"] == "inter-op-gap"]
    return float(re.search(r"host synchronize / copy ([0-9.]+) us", gaps["message"]).group(1))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [83, 4051])
def test_both_layouts_of_one_run_find_the_same_host_synchronize_gaps(tmp_path, seed):
    """The gaps between a step's tasks are the same tasks' in both layouts: inter-op-gap gives the gaps with a
    host synchronize inside the same time. torch_npu's Stage (first task to last) is idle only in such gaps; its
    step window's time before the first task (Preparing) is not a gap's (it was spread over the gaps and the
    free time before them). (msprof's export of this run has no steps: its time between steps, gaps of no
    cause shown, is not compared.)"""
    from fixtures.generator import write_export

    got = {}
    for layout in ("torch_npu", "msprof"):
        (root,) = write_export("host_sync_low_util", tmp_path / layout, layout=layout, seed=seed, steps=3)
        got[layout] = _host_sync_gaps_us(root, tmp_path / f"out-{layout}")
    assert got["torch_npu"] == pytest.approx(got["msprof"], abs=0.002)
