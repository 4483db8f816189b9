"""The same run exported in both layouts (torch_npu and msprof) gets the same warnings, each of the same
severity (issue 45): severity is the rule's condition, not what other findings left of its impact."""

from __future__ import annotations

import json

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
