"""diagnose --logs: the operator whose task failed is linked to its error records (JSON, Markdown, HTML)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from analyzer.cli import main
from fixtures.logs.failed_op import write_failed_op

# The whole command over generated inputs: in the full suite, not the fast loop.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def failed(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("failed_op")
    return out / "failed_op", write_failed_op(out, seed=5)


def _diagnose(base: Path, truth: dict, logs: Path, out: Path) -> dict:
    export = base / truth["export"]
    assert main(["diagnose", str(export), "--logs", str(logs), "--out", str(out)]) == 0
    return json.loads((out / truth["export"] / "diagnosis.json").read_text())


def test_failed_task_names_its_operator_with_code_meaning_and_dump(failed, tmp_path):
    base, t = failed
    doc = _diagnose(base, t, base / "log", tmp_path)
    [op] = doc["failed_operators"]
    assert (op["op_name"], op["op_type"], op["input_shapes"], op["matched_by"]) == (
        t["op_name"],
        t["op_type"],
        t["input_shapes"],
        "task",
    )
    assert op["dur_us"] == pytest.approx(t["dur_us"], abs=1e-3)
    assert (op["stream_id"], op["task_id"], op["kernel_name"]) == (t["stream_id"], t["task_id"], t["kernel"])
    assert op["dump_path"] == t["dump_path"] and op["error_code"] and op["meaning"]
    assert op["record_count"] == 2 and all(r.startswith("debug/plog/plog-") for r in op["records"])
    md = (tmp_path / t["export"] / "diagnosis.md").read_text()
    section = md.split("## Failed operator (from the logs)", 1)[1].split("## Findings", 1)[0]
    assert t["op_name"] in section and t["kernel"] in section and t["dump_path"] in section
    html = (tmp_path / t["export"] / "report.html").read_text()
    part = re.search(r'<section id="failed-operators">.*?</section>', html, re.S).group(0)
    assert t["op_name"] in part and t["dump_path"] in part and f"{t['stream_id']} / {t['task_id']}" in part


def test_log_naming_no_task_of_the_profile_links_nothing(failed, tmp_path):
    base, t = failed
    logs = tmp_path / "otherlog"
    plog = next((base / "log").rglob("plog-*.log"))
    target = logs / plog.relative_to(base / "log")
    target.parent.mkdir(parents=True)
    text = plog.read_text().replace(f"stream_id={t['stream_id']}", "stream_id=999")  # a stream the profile lacks
    target.write_text(text.replace(f"kernel_name={t['op_type']}_", "kernel_name=NoSuchOp_"))
    doc = _diagnose(base, t, logs, tmp_path / "out")
    assert "failed_operators" not in doc
    assert "Failed operator" not in (tmp_path / "out" / t["export"] / "diagnosis.md").read_text()


def test_kernel_name_alone_links_an_operator_of_its_type(failed, tmp_path):
    base, t = failed
    logs = tmp_path / "kernellog"
    plog = next((base / "log").rglob("plog-*.log"))
    target = logs / plog.relative_to(base / "log")
    target.parent.mkdir(parents=True)
    target.write_text(plog.read_text().replace(f"stream_id={t['stream_id']}", "stream_id=999"))
    [op] = _diagnose(base, t, logs, tmp_path / "out")["failed_operators"]
    assert (op["matched_by"], op["op_type"], op["stream_id"]) == ("kernel", t["op_type"], 999)
