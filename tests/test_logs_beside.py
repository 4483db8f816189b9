"""Logs found beside an export: diagnose without --logs reads the log tree inside or next to the export folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.logs.beside import found_logs, logs_beside
from fixtures.logs.failed_op import write_failed_op

# The whole command over generated inputs: in the full suite, not the fast loop.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> tuple[Path, dict]:
    """job/rank_N/failed_op/{export, log/}: each rank's export with its own log beside it."""
    root = tmp_path_factory.mktemp("job") / "job"
    truths = {r: write_failed_op(root / f"rank_{r}", seed=s) for r, s in ((0, 5), (1, 6))}
    return root, truths


def _ops(out: Path) -> dict[str, list]:
    docs = [json.loads(p.read_text()) for p in sorted(out.glob("*/diagnosis.json"))]
    return {d["run_id"]: [(o["op_name"], o["log_run_id"]) for o in d.get("failed_operators", [])] for d in docs}


def test_diagnose_reads_the_log_folder_beside_the_export_and_says_so(job, tmp_path, capsys):
    root, truths = job
    base, t = root / "rank_0" / "failed_op", truths[0]
    assert main(["diagnose", str(base / t["export"]), "--out", str(tmp_path), "--format", "json"]) == 0
    assert f"logs found beside {t['export']}: {base / 'log'}" in capsys.readouterr().err
    assert list(_ops(tmp_path).values()) == [[(t["op_name"], "log")]]
    assert (tmp_path / "log" / "logs.json").is_file()


def test_per_rank_log_folders_each_go_with_their_rank(job, tmp_path):
    root, truths = job
    assert main(["diagnose", str(root), "--out", str(tmp_path), "--format", "json"]) == 0
    linked = sorted(ops[0] for ops in _ops(tmp_path).values())
    assert linked == sorted((truths[r]["op_name"], f"rank_{r}-failed_op-log") for r in (0, 1))


def test_inside_and_asys_folders_are_found_and_a_folder_without_logs_is_not(tmp_path):
    export = tmp_path / "x_ascend_pt"
    (export / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (tmp_path / "log").mkdir()
    (tmp_path / "log" / "core.bin").write_bytes(b"\0")  # a log folder holding no log
    assert logs_beside(export) == []
    asys = tmp_path / "asys_output_20240912" / "dfx" / "log" / "host" / "cann" / "debug" / "plog"
    asys.mkdir(parents=True)
    (asys / "plog-1_2.log").write_text("[ERROR] RUNTIME(1,p):2024-09-12-16:40:03.335.920 [a.cc:1]1 x\n")
    assert [c.root for c in logs_beside(export)] == [tmp_path / "asys_output_20240912"]
    inside = export / "ascend" / "log" / "run" / "plog"
    inside.mkdir(parents=True)
    (inside / "plog-1_2.log").write_text("[ERROR] RUNTIME(1,p):2024-09-12-16:40:03.335.920 [a.cc:1]1 x\n")
    [found] = found_logs([export])
    assert (found.logdir, found.run_id) == (export / "ascend" / "log", "log")


def test_export_without_logs_is_diagnosed_byte_for_byte_as_before(job, tmp_path, capsys):
    root, truths = job
    t = truths[1]
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copytree(root / "rank_1" / "failed_op" / t["export"], alone / t["export"])
    (alone / "logs").mkdir()  # a folder of that name holding no log: not logs
    args = ["--format", "json,md"]
    assert main(["diagnose", str(alone / t["export"]), "--out", str(tmp_path / "a"), *args]) == 0
    assert "logs found" not in capsys.readouterr().err
    assert (
        main(["diagnose", str(root / "rank_1" / "failed_op" / t["export"]), "--out", str(tmp_path / "b"), *args]) == 0
    )
    a = (tmp_path / "a" / t["export"] / "diagnosis.md").read_text()
    b = (tmp_path / "b" / t["export"] / "diagnosis.md").read_text()
    assert "Failed operator" not in a and "Failed operator" in b
    assert not (tmp_path / "a" / "log").exists()


def test_utc_offset_applies_to_found_logs_and_is_refused_without_any(job, tmp_path, capsys):
    root, truths = job
    base, t = root / "rank_0" / "failed_op", truths[0]
    args = ["--out", str(tmp_path / "o"), "--format", "json", "--log-utc-offset", "+08:00"]
    assert main(["diagnose", str(base / t["export"]), *args]) == 0
    assert "UTC+08:00" in capsys.readouterr().err
    alone = tmp_path / "alone"
    shutil.copytree(base / t["export"], alone / t["export"])
    assert main(["diagnose", str(alone / t["export"]), *args]) == 2
    assert "--log-utc-offset: no logs to read" in capsys.readouterr().err
