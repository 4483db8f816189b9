"""The logs rules on real multi-rank collections kept outside the project (/work/extra-logs; skipped when absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.logs.layout import find_log_files

EXTRA = Path("/work/extra-logs")
pytestmark = pytest.mark.real_data  # real collections, like ../shared/real: not in the fast loop


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


# FaultDiag's cases: the first finding's code and meaning, and the rank LOG002 names (FaultDiag's expected root
# cause, test/st/test_st.py: aicpu_notify worker-0 device-11 = rank 0; cqe: not asserted there (rank 77 faults
# first); event_timeout worker-1 device-0 = rank 1 (and worker-0 device-0 = rank 0); transport_init worker-0
# device-0 = rank 0; transport_timeout worker-1 device-1 = rank 9, which wrote no error).
FAULTDIAG = [
    ("st_aicpu_notify_testcase", "EI0012", "HCCL SDMA task exception", "rank 0"),
    ("st_cqe_testcase", "EI0013", "HCCL error CQE", "rank 77"),
    ("st_event_timeout_testcase", "EI0006", "HCCL link error", "rank 1"),
    ("st_transport_init_testcase", "EI0009", "HCCL transport init failed", "rank 0"),
    ("st_transport_timeout_testcase", "EI0006", "HCCL socket / link build timeout", "rank 9"),
]


@pytest.mark.parametrize(("name", "code", "meaning", "rank"), FAULTDIAG)
def test_faultdiag_first_finding_is_the_known_error_and_its_rank(tmp_path, name, code, meaning, rank):
    tree = _case(f"faultdiag_st/{name}")
    assert main(["logs", str(tree), "--out", str(tmp_path), "--format", "json"]) == 0
    findings = json.loads((tmp_path / tree.name / "logs.json").read_text())["findings"]
    first = findings[0]
    assert (first["code"], first["details"]["error_code"]) == ("LOG001", code)
    assert first["details"]["meaning"].startswith(meaning)
    [job] = [f for f in findings if f["code"] == "LOG002"]
    assert job["subject"] == rank


def test_asys_atrace_dumps_are_not_read_as_logs(tmp_path):
    tree = _case("asys_data_asys_test_dir")
    assert main(["logs", str(tree), "--out", str(tmp_path), "--format", "json"]) == 0
    doc = json.loads((tmp_path / tree.name / "logs.json").read_text())
    atrace = [p for p in (tree / "ascend" / "atrace").rglob("*.txt")]
    assert atrace and doc["summary"]["not_log_files"] >= len(atrace)
    assert not [f.rel for f in find_log_files(tree) if "atrace" in f.rel.split("/")]
