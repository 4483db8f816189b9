"""The logs rules on real multi-rank collections kept outside the project (/work/extra-logs; skipped when absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.logs.layout import find_log_files

EXTRA = Path("/work/extra-logs")


def _case(name: str) -> Path:
    path = EXTRA / name
    if not path.is_dir():
        pytest.skip(f"{path} is absent: real collections live outside the project (see its SOURCE.md)")
    return path


def test_faultdiag_aicpu_notify_names_the_worker_faultdiag_names(tmp_path):
    # FaultDiag's expected root cause: worker-0 (its SDMA exception); worker-1's task abort 30 min later follows it
    tree = _case("faultdiag_st/st_aicpu_notify_testcase")
    assert main(["logs", str(tree), "--out", str(tmp_path), "--format", "json"]) == 0
    doc = json.loads((tmp_path / tree.name / "logs.json").read_text())
    [job] = [f for f in doc["findings"] if f["code"] == "LOG002"]
    assert job["subject"] == "rank 0" and job["details"]["waited_ranks"] == "1"


def test_asys_atrace_dumps_are_not_read_as_logs(tmp_path):
    tree = _case("asys_data_asys_test_dir")
    assert main(["logs", str(tree), "--out", str(tmp_path), "--format", "json"]) == 0
    doc = json.loads((tmp_path / tree.name / "logs.json").read_text())
    atrace = [p for p in (tree / "ascend" / "atrace").rglob("*.txt")]
    assert atrace and doc["summary"]["not_log_files"] >= len(atrace)
    assert not [f.rel for f in find_log_files(tree) if "atrace" in f.rel.split("/")]
