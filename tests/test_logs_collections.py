"""A folder holding several log collections: each found and judged on its own (npu-triage logs, diagnose)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.logs.beside import found_logs
from analyzer.logs.collections import Collection, find_collections
from analyzer.logs.layout import scan_log_folder
from analyzer.runs.catalog import open_catalog
from fixtures.logs.failed_op import write_failed_op
from fixtures.logs.scenarios import write_aicore
from tests.test_logs_reader import real_logs  # noqa: F401  (the fixture)

# The whole command over generated inputs: in the full suite, not the fast loop.
pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "cann_logs"
PLOG = "[ERROR] RUNTIME(1,python3):2024-09-12-16:40:03.335.920 [a.cc:1]1 rtStreamSynchronize failed\n"


def _plog(folder: Path, name: str = "plog-1_20240912164003456.log") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(PLOG, encoding="utf-8")


def _ids(logdir: Path) -> list[tuple[str, str, bool]]:
    return [(c.run_id, c.root.relative_to(logdir).as_posix(), c.loose) for c in find_collections(logdir, logdir.name)]


def _first(out: Path, run_id: str) -> dict:
    return json.loads((out / run_id / "logs.json").read_text())["findings"][0]


def test_bundled_examples_as_a_whole_give_each_collection_its_own_first_finding(tmp_path, capsys):
    assert main(["logs", str(EXAMPLES), "--out", str(tmp_path / "all"), "--fail-on", "critical"]) == 1
    io = capsys.readouterr()
    assert "holds 3 log collections" in io.err
    rows = [line.split("\t") for line in io.out.splitlines()]  # piped: TSV rows, one block per collection
    assert list(dict.fromkeys(r[0] for r in rows)) == ["aicore_error", "hccl_timeout"]  # stall has no finding
    aicore = json.loads((EXAMPLES / "aicore_error" / "truth.json").read_text())
    assert (_first(tmp_path / "all", "aicore_error")["code"], _first(tmp_path / "all", "aicore_error")["subject"]) == (
        "LOG001",
        aicore["kernel"],
    )
    job = json.loads((tmp_path / "all" / "hccl_timeout" / "logs.json").read_text())["findings"]
    assert [(f["code"], f["subject"]) for f in job[:2]] == [("LOG001", aicore["kernel"]), ("LOG002", "rank 2")]
    assert not [f for f in job if f["code"] == "LOG003"]  # no collection is "days before" another
    assert (tmp_path / "all" / "logs-index.html").is_file()
    index = (tmp_path / "all" / "logs-index.html").read_text()
    assert all(f'href="{name}/logs.html"' in index for name in ("aicore_error", "hccl_timeout", "stall"))
    # each collection's report is byte for byte the one it gets judged alone
    for name in ("aicore_error", "hccl_timeout", "stall"):
        assert main(["logs", str(EXAMPLES / name), "--out", str(tmp_path / "one")]) in (0, 1)
        for f in ("logs.json", "logs.md", "logs.html"):
            assert (tmp_path / "one" / name / f).read_bytes() == (tmp_path / "all" / name / f).read_bytes()
    assert not (tmp_path / "one" / "logs-index.html").exists()


def _asys(logdir: Path, name: str, seed: int) -> dict:
    """An asys collection holding the generated AI Core tree (seed) under dfx/log/host/cann."""
    truth = write_aicore(logdir.parent / f"gen{seed}", seed=seed, noise=40)
    cann = logdir / name / "dfx" / "log" / "host" / "cann"
    cann.parent.mkdir(parents=True)
    shutil.move(logdir.parent / f"gen{seed}" / "aicore_error" / "ascend" / "log", cann)
    return truth


def test_two_asys_collections_side_by_side_are_judged_apart(tmp_path, capsys):
    logdir = tmp_path / "incidents"
    truths = {"asys_output_20240912A": _asys(logdir, "asys_output_20240912A", 3), "asys_output_20240912B": {}}
    truths["asys_output_20240912B"] = _asys(logdir, "asys_output_20240912B", 8)
    assert truths["asys_output_20240912A"]["task_id"] != truths["asys_output_20240912B"]["task_id"]
    assert main(["logs", str(logdir), "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    assert "holds 2 log collections" in capsys.readouterr().err
    for name, t in truths.items():
        first = _first(tmp_path / "out", name)
        assert (first["code"], first["subject"]) == ("LOG001", t["kernel"])
        assert (first["details"]["device_id"], first["details"]["task_id"]) == (t["device_id"], t["task_id"])
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(truths)  # no index without html


def test_a_job_of_rank_folders_stays_one_collection(tmp_path):
    for rank in (0, 1):
        _plog(tmp_path / "job" / f"rank_{rank}" / "asys_output_1" / "dfx" / "log" / "host" / "cann" / "debug" / "plog")
        _plog(tmp_path / "flat" / f"worker-{rank}" / "debug" / "plog")
    _plog(tmp_path / "nodes" / "node-0" / "rank_0" / "log" / "run" / "plog")
    _plog(tmp_path / "nodes" / "node-1" / "rank_1" / "log" / "run" / "plog")
    for job in ("job", "flat", "nodes"):
        assert find_collections(tmp_path / job, job) == [Collection(tmp_path / job, job)]
    assert _ids(EXAMPLES / "hccl_timeout") == [("hccl_timeout", ".", False)]
    # two jobs side by side are two collections
    assert [rid for rid, _, _ in _ids(tmp_path)] == ["flat", "job", "nodes"]


def test_a_single_collection_or_a_plain_folder_is_one_collection_as_before(tmp_path):
    for name in ("aicore_error", "hccl_timeout", "stall"):
        assert find_collections(EXAMPLES / name, name) == [Collection(EXAMPLES / name, name)]
    _plog(tmp_path / "plain" / "a")  # folders of logs of no known tree are never split
    _plog(tmp_path / "plain" / "b")
    _plog(tmp_path / "legacy" / "slog" / "plog")
    (tmp_path / "msnpureport" / "dev-os-0").mkdir(parents=True)
    _plog(tmp_path / "msnpureport" / "hisi_logs" / "device-0", "history.log")
    for name in ("plain", "legacy", "msnpureport"):
        assert find_collections(tmp_path / name, name) == [Collection(tmp_path / name, name)]
    one = tmp_path / "plain" / "a" / "plog-1_20240912164003456.log"
    assert find_collections(one, one.name) == [Collection(one, one.name)]
    assert [rid for rid, _, _ in _ids(tmp_path)] == ["legacy", "msnpureport", "plain"]


def test_log_files_beside_collections_are_one_more_part_and_names_stay_apart(tmp_path):
    _plog(tmp_path / "x" / "a" / "log" / "debug" / "plog")
    _plog(tmp_path / "x" / "b" / "log" / "debug" / "plog")
    _plog(tmp_path / "x", "notes.log")
    assert _ids(tmp_path / "x") == [("x", ".", True), ("a", "a", False), ("b", "b", False)]
    files, _ = scan_log_folder(tmp_path / "x", loose=True)
    assert [f.rel for f in files] == ["notes.log"]
    for job, inc in (("p", "inc1"), ("p", "inc2"), ("q", "inc1"), ("q", "inc2")):
        _plog(tmp_path / "y" / job / inc / "slog" / "plog")
    assert [rid for rid, _, _ in _ids(tmp_path / "y")] == ["p-inc1", "p-inc2", "q-inc1", "q-inc2"]


def test_diagnose_reads_each_collection_of_the_log_folder_beside_the_export(tmp_path, capsys):
    t = write_failed_op(tmp_path, seed=5, logs_name="log/asys_output_a")
    older = _asys(tmp_path / "failed_op" / "log", "asys_output_b", 4)
    export = tmp_path / "failed_op" / t["export"]
    assert [(f.run_id, f.logdir.name) for f in found_logs([export])] == [
        ("asys_output_a", "asys_output_a"),
        ("asys_output_b", "asys_output_b"),
    ]
    out = tmp_path / "out"
    assert main(["diagnose", str(export), "--out", str(out), "--format", "json"]) == 0
    assert capsys.readouterr().err.count("logs found beside") == 2
    [diagnosis] = [json.loads(p.read_text()) for p in out.glob("*/diagnosis.json")]
    assert [(o["op_name"], o["log_run_id"]) for o in diagnosis["failed_operators"]] == [(t["op_name"], "asys_output_a")]
    assert _first(out, "asys_output_a")["subject"] == t["kernel"]
    assert _first(out, "asys_output_b")["subject"] == older["kernel"]
    # batch keeps each collection's findings apart in the catalog
    catalog = tmp_path / "cat.duckdb"
    assert main(["batch", str(tmp_path / "failed_op"), "--catalog", str(catalog), "--jobs", "1"]) == 0
    assert capsys.readouterr().err.count("logs found beside") == 2
    con = open_catalog(catalog, read_only=True)
    rows = con.execute("SELECT logs, subject FROM log_findings WHERE code = 'LOG001' ORDER BY logs").fetchall()
    con.close()
    assert rows == [("../log/asys_output_a", t["kernel"]), ("../log/asys_output_b", older["kernel"])]


def test_all_asys_collections_beside_an_export_are_found(tmp_path):
    export = tmp_path / "x_ascend_pt"
    (export / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    for name in ("asys_output_1", "asys_output_2"):
        _plog(tmp_path / name / "dfx" / "log" / "host" / "cann" / "debug" / "plog")
    assert [f.run_id for f in found_logs([export])] == ["asys_output_1", "asys_output_2"]


@pytest.mark.real_data
def test_real_logs_folder_splits_into_its_collections(real_logs):  # noqa: F811
    ids = [rid for rid, _, _ in _ids(real_logs)]
    assert ids[0] == "asys_aicore_error_2024" and "collect_milan" in ids and len(ids) == len(set(ids))
