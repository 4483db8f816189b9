"""`npu-triage logs` and `diagnose --logs` on generated trees with ground truth, and on the real collections."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.cli import main
from fixtures.logs.scenarios import write_aicore, write_hccl
from fixtures.logs.stall import write_stall
from tests.test_logs_reader import real_logs  # noqa: F401  (the fixture)

# The whole command over generated inputs: in the full suite, not the fast loop.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trees(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("logtrees")
    truths = {
        "aicore_error": write_aicore(out, seed=11, noise=300),
        "hccl_timeout": write_hccl(out, seed=4, ranks=8, noise=60),
        "hccl_timeout_flat": write_hccl(out, seed=9, ranks=4, noise=60, flat=True),
        "stall": write_stall(out, seed=2),
    }
    return out, truths


def _logs(tree: Path, out: Path, *extra: str) -> tuple[int, dict]:
    code = main(["logs", str(tree), "--out", str(out), *extra])
    report = out / tree.name / "logs.json"
    return code, json.loads(report.read_text()) if report.exists() else {}


def test_logs_aicore_tree_names_the_kernel_first_and_keeps_old_errors_apart(trees, tmp_path):
    out, truth = trees
    code, doc = _logs(out / "aicore_error", tmp_path, "--fail-on", "critical")
    t = truth["aicore_error"]
    assert code == 1
    first = doc["findings"][0]
    assert (first["code"], first["subject"]) == ("LOG001", t["kernel"])
    assert (first["details"]["device_id"], first["details"]["stream_id"], first["details"]["task_id"]) == (
        t["device_id"],
        t["stream_id"],
        t["task_id"],
    )
    assert first["details"]["error_code"] == "AICORE_ERROR" and "AI Core error" in first["details"]["meaning"]
    assert first["details"]["dump_path"].startswith("./extra-info/data-dump/")
    old = [f for f in doc["findings"] if f["code"] == "LOG003"]
    assert {f["subject"].rsplit("/", 1)[-1] for f in old} >= {"ascend_install.log"}
    assert all(f["severity"] == "info" for f in old) and "Old_Kernel_1" not in first["message"]
    assert any(row[0] == ">>" for row in doc["failure_context"]["rows"])
    assert {p.name for p in (tmp_path / "aicore_error").iterdir()} == {"logs.json", "logs.md", "logs.html"}


@pytest.mark.parametrize("job", ["hccl_timeout", "hccl_timeout_flat"])
def test_logs_job_names_the_rank_that_failed_first(trees, tmp_path, job):
    out, truth = trees
    code, doc = _logs(out / job, tmp_path, "--format", "json")
    t = truth[job]
    assert code == 0
    rank = next(f for f in doc["findings"] if f["code"] == "LOG002")
    assert rank["subject"] == f"rank {t['failed_rank']}"
    assert rank["details"]["waited_count"] == t["ranks"] - 1
    assert [f["code"] for f in doc["findings"][:2]] == ["LOG001", "LOG002"]


def _breakdown(report: Path) -> dict:
    return {p["part"]: p["us"] for p in json.loads(report.read_text())["summary"]["breakdown"]["parts"]}


def test_diagnose_with_logs_gives_the_stall_its_cause(trees, tmp_path):
    out, truth = trees
    t = truth["stall"]
    run = Path(t["export"]).name
    profile, logs = str(out / "stall" / "profile"), str(out / "stall" / "logs")
    assert main(["diagnose", profile, "--logs", logs, "--out", str(tmp_path / "a"), "--format", "json,html"]) == 0
    assert main(["diagnose", profile, "--out", str(tmp_path / "b"), "--format", "json,html"]) == 0
    parts, plain = (
        _breakdown(tmp_path / "a" / run / "diagnosis.json"),
        _breakdown(tmp_path / "b" / run / "diagnosis.json"),
    )
    assert parts["gap_memory_alloc"] > 0 and parts["gap_host_setup"] == 0
    assert plain["gap_memory_alloc"] == 0 and "gap_host_setup" not in plain
    assert plain["gap_unattributed"] - parts["gap_unattributed"] == pytest.approx(parts["gap_memory_alloc"], abs=0.002)
    assert '"name":"log record"' in (tmp_path / "a" / run / "report.html").read_text()  # the marks on the timeline
    assert "log record" not in (tmp_path / "b" / run / "report.html").read_text()
    summary = json.loads((tmp_path / "a" / "logs" / "logs.json").read_text())["summary"]
    assert summary["timeline_marks"] == 2 and summary["timeline_note"] is None


def test_logs_of_another_time_say_why_none_was_placed(trees, tmp_path, capsys):
    # the right logs read with a wrong UTC offset: their host activities land a day away from the export
    out, _ = trees
    profile, logs = str(out / "stall" / "profile"), str(out / "stall" / "logs")
    argv = ["diagnose", profile, "--logs", logs, "--out", str(tmp_path / "a"), "--format", "json,md"]
    assert main([*argv, "--log-utc-offset=-12:00"]) == 0
    err = capsys.readouterr().err
    assert "0 record(s) placed on the timeline" in err
    assert "none falls inside the export's time: the logs' host activities run " in err
    summary = json.loads((tmp_path / "a" / "logs" / "logs.json").read_text())["summary"]
    assert summary["timeline_marks"] == 0 and summary["timeline_note"].startswith("none falls inside")
    assert summary["timeline_note"] in (tmp_path / "a" / "logs" / "logs.md").read_text()


def test_attach_logs_classifies_the_planted_gap(trees):
    from analyzer.api import load
    from analyzer.logs.profile_join import attach_logs
    from analyzer.rule_engine.model import ConfiguredRules
    from analyzer.rule_engine.views import create_views

    out, truth = trees
    t = truth["stall"]
    trace = load(out / "stall" / "profile")
    report = attach_logs(trace.con, out / "stall" / "logs", trace.run_ids, None, ConfiguredRules(()))
    assert report.summary["clock"].startswith("log wall time read as UTC+08:00")
    create_views(trace.con)
    causes = trace.con.execute(
        "SELECT start_ns, end_ns, cause FROM _classified_gaps WHERE cause = 'memory_alloc' ORDER BY start_ns"
    ).fetchall()
    assert causes == [(t["gap_start_ns"], t["gap_end_ns"], "memory_alloc")]


def test_logs_usage_errors_exit_2_before_any_work(trees, tmp_path, capsys):
    out, _ = trees
    assert main(["logs", str(tmp_path / "absent"), "--out", str(tmp_path)]) == 2
    assert main(["logs", str(out / "aicore_error"), "--out", str(out / "aicore_error" / "reports")]) == 2
    assert not (out / "aicore_error" / "reports").exists()
    assert "lies inside" in capsys.readouterr().err


@pytest.mark.real_data
@pytest.mark.parametrize(
    ("sub", "kernel"),
    [
        ("asys_aicore_error_2024", "FlashAttentionScore_5881aeec01e51adb01fb1db8be1c04f0_10000000000022420943_mix_aic"),
        ("plog_snippets_2025/ut/msaicerr/res/ori_data/collect_milan", None),
    ],
)
def test_logs_real_collection_first_finding_is_the_fault(real_logs, tmp_path, sub, kernel):  # noqa: F811
    code, doc = _logs(real_logs / sub, tmp_path, "--format", "json")
    assert code == 0
    first = doc["findings"][0]
    assert first["code"] == "LOG001"
    if kernel:
        assert first["subject"] == kernel and "AI Vector core error" in first["details"]["meaning"]
    assert first["details"]["meaning"] and first["details"]["error_code"] != "no known code"


def test_diagnose_logs_output_inside_the_log_folder_is_refused(trees, capsys):
    out, _ = trees
    stall = out / "stall"
    code = main(["diagnose", str(stall / "profile"), "--logs", str(stall / "logs"), "--out", str(stall / "logs" / "r")])
    assert code == 2 and "lies inside" in capsys.readouterr().err
    assert not (stall / "logs" / "r").exists()
    assert main(["diagnose", str(stall / "profile"), "--log-utc-offset", "+8"]) == 2


@pytest.mark.slow  # a whole command: the full suite runs it
def test_diagnose_with_logs_of_a_job_of_summaries_only_judges_the_logs(tmp_path):
    # the job's ranks hold no per-task data, so there is no run to link the logs to: they are judged alone
    examples = Path(__file__).resolve().parents[1] / "fixtures" / "examples"
    out = tmp_path / "r"
    args = ["diagnose", str(examples / "job_slow_rank"), "--logs", str(examples / "cann_logs" / "aicore_error")]
    assert main([*args, "--out", str(out), "--format", "json"]) == 0
    assert (out / "job_slow_rank" / "diagnosis.json").is_file()
    assert json.loads((out / "aicore_error" / "logs.json").read_text(encoding="utf-8"))["findings"]
