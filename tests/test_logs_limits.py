"""`npu-triage logs`: the user's memory limit is kept; asys atrace/ trace dumps are not read as logs."""

from __future__ import annotations

import json

from analyzer.cli import main
from analyzer.cli.logs_cmd import LOGS_MEMORY_BYTES, logs_memory_bytes
from analyzer.execution.memory import ENV

_PLOG = "[ERROR] RUNTIME(7,python3):2024-09-12-16:40:03.335.920 [e.cc:1]7 Task run failed, stream_id=4, task_id=9\n"
_TRACE = "[ERROR] TS(1,ts):2024-03-02-10:05:46.637.402 [ts.c:1]1 not a log record, a trace dump line\n"


def test_logs_memory_limit_is_the_users_when_given(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert logs_memory_bytes() <= LOGS_MEMORY_BYTES
    monkeypatch.setenv(ENV, "3GB")  # what --memory-limit 3GB sets (analyzer/cli/__init__.py)
    assert logs_memory_bytes() == 3 * 10**9


def test_logs_command_passes_memory_limit_above_default(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    tree = tmp_path / "logs"
    (tree / "debug" / "plog").mkdir(parents=True)
    (tree / "debug" / "plog" / "plog-7_20240912164003456.log").write_text(_PLOG)
    assert main(["logs", str(tree), "--out", str(tmp_path / "out"), "--format", "json", "--memory-limit", "2GB"]) == 0
    assert logs_memory_bytes() == 2 * 10**9


def test_atrace_txt_files_are_counted_not_read(tmp_path):
    tree = tmp_path / "asys_output_1"
    plog = tree / "dfx" / "log" / "host" / "cann" / "debug" / "plog"
    plog.mkdir(parents=True)
    (plog / "plog-7_20240912164003456.log").write_text(_PLOG)
    trace = tree / "atrace" / "trace_1_1_2024" / "ts_0_event_1"
    trace.mkdir(parents=True)
    (trace / "ts_0_1_20240302.txt").write_text(_TRACE * 3)
    (tree / "atrace" / "trace_1_1_2024" / "stackcore.bin").write_bytes(b"\0\1")
    (tree / "notes.txt").write_text(_PLOG)  # a .txt outside atrace/ is still read
    assert main(["logs", str(tree), "--out", str(tmp_path / "out"), "--format", "json,md"]) == 0
    doc = json.loads((tmp_path / "out" / tree.name / "logs.json").read_text())
    assert doc["summary"]["files"] == 2 and doc["summary"]["not_log_files"] == 2
    assert doc["summary"]["error_records"] == 2
    assert "2 file(s) that are not logs" in (tmp_path / "out" / tree.name / "logs.md").read_text()
