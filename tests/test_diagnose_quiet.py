"""diagnose --quiet: no info lines on stderr, warnings and errors kept; the reports keep every problem."""

from __future__ import annotations

import json
import shutil

import pytest

from analyzer.cli import main
from tests.conftest import ROOT

RUN = next((ROOT / "fixtures" / "examples" / "resnet_host_sync").glob("resnet50_run_*"))


def _export_with_an_info_and_a_warning(tmp_path):
    """No kernel_details (info: ops from the timeline) and a row of text in step_trace_time.csv (warning)."""
    root = shutil.copytree(RUN, tmp_path / "in" / RUN.name)
    (root / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").unlink()
    with (root / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv").open("a", encoding="utf-8") as f:
        f.write("x,abc,def\n")
    return root


@pytest.mark.slow
def test_quiet_drops_info_lines_and_keeps_warnings(tmp_path, capsys):
    root = _export_with_an_info_and_a_warning(tmp_path)
    assert main(["diagnose", str(root), "--out", str(tmp_path / "loud"), "--format", "json"]) == 0
    loud = capsys.readouterr().err.splitlines()
    assert main(["diagnose", str(root), "--out", str(tmp_path / "quiet"), "--format", "json", "--quiet"]) == 0
    captured = capsys.readouterr()
    quiet = captured.err.splitlines()
    infos = [line for line in loud if line.startswith("info: ")]
    assert len(infos) == 1 and "no kernel_details" in infos[0]
    assert [line for line in loud if line.startswith(("warning: ", "error: "))] == quiet
    assert len(quiet) == 1 and quiet[0].startswith("warning: ASCEND_PROFILER_OUTPUT/step_trace_time.csv:line ")
    assert captured.out == ""
    (path,) = (tmp_path / "quiet").glob("*/diagnosis.json")
    severities = [p["severity"] for p in json.loads(path.read_text(encoding="utf-8"))["ingest_problems"]]
    assert sorted(severities) == ["info", "warning"]
