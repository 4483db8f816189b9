"""Every command end to end on generated exports of each layout, with the input-hash check after each one."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.ingest.metadata.discover import discover
from fixtures.generator import write_export
from tests.tree_hash import tree_digest

pytestmark = pytest.mark.slow

CASES = [
    ("host_sync_low_util", "torch_npu", "text"),
    ("gappy_multistream", "msprof", "text"),
    ("mte_bound_conv", "torch_npu", "db"),
    ("comm_not_overlapped", "msprof", "db"),
]


def _run_checked(argv: list[str], inputs: Path, before: dict[str, str]) -> int:
    code = main(argv)
    assert tree_digest(inputs) == before, f"`npu-triage {argv[0]}` changed the input tree"
    return code


@pytest.mark.parametrize(("scenario", "layout", "export_type"), CASES, ids=["-".join(c) for c in CASES])
def test_cli_every_command_leaves_inputs_byte_identical(scenario, layout, export_type, tmp_path, capsys):
    inputs = tmp_path / "in"
    write_export(scenario, inputs, layout=layout, export_type=export_type)
    before = tree_digest(inputs)
    out = tmp_path / "out"
    assert (
        _run_checked(
            ["ingest", str(inputs), "--db", str(out / "runs.duckdb"), "--parquet", str(out / "pq")], inputs, before
        )
        == 0
    )
    assert _run_checked(["diagnose", str(inputs), "--out", str(out / "reports")], inputs, before) == 0
    assert (
        _run_checked(
            ["diagnose", "--db", str(out / "runs.duckdb"), "--out", str(out / "again"), "--format", "json"],
            inputs,
            before,
        )
        == 0
    )
    assert (
        _run_checked(["batch", str(inputs), "--catalog", str(out / "cat.duckdb"), "--jobs", "1"], inputs, before) == 0
    )
    assert _run_checked(["runs", str(out / "cat.duckdb")], inputs, before) == 0
    reports = sorted(p.name for p in (out / "reports").rglob("*") if p.is_file())
    assert {"diagnosis.json", "diagnosis.md", "report.html"} <= set(reports)
    assert "Traceback" not in capsys.readouterr().err


def test_cli_diff_and_sweep_leave_inputs_byte_identical(tmp_path, capsys):
    inputs = tmp_path / "in"
    before_root, after_root, rerun_root = write_export("regression_pair", inputs)
    sweep = write_export("batch_sweep", inputs / "sweep")
    before = tree_digest(inputs)
    assert (
        _run_checked(
            [
                "diff",
                str(before_root),
                str(after_root),
                "--fail-on-regression",
                "5",
                "--html",
                str(tmp_path / "diff.html"),
            ],
            inputs,
            before,
        )
        == 1
    )
    assert _run_checked(["diff", str(before_root), str(rerun_root), "--fail-on-regression", "5"], inputs, before) == 0
    assert (
        _run_checked(["sweep", *[str(p) for p in sweep], "--html", str(tmp_path / "sweep.html")], inputs, before) == 0
    )
    assert "scheduling overhead" in capsys.readouterr().err  # into a pipe the verdict goes to stderr


def test_cli_diagnose_folder_of_several_runs_writes_run_reports_no_all_runs(real_dir, tmp_path, capsys):
    """The real tree with default formats: each run's reports; no all-runs one, since no run
    records a batch size (batch-size-scaling, the only rule comparing runs, is skipped)."""
    before = tree_digest(real_dir)
    # exit 3: the level1 rank0/rank1 pair is a job of 8 ranks (rank 0's matrix sends to ranks 1-7), 6 absent
    assert _run_checked(["diagnose", str(real_dir), "--out", str(tmp_path)], real_dir, before) == 3
    pages = sorted(p.parent.name for p in tmp_path.rglob("report.html"))
    runs = [s.source_id for s in discover(real_dir)]  # the aic-metrics folder holds one run per metric group
    assert pages == sorted(runs) and "all-runs" not in pages
    captured = capsys.readouterr()
    assert "internal error" not in captured.err
    assert [line for line in captured.err.splitlines() if line.startswith("error:")] == [
        f"error: {real_dir}:ranks: 6 of the 8 ranks the job implies (its metadata groups and matrices) have no "
        "export here: rank(s) 2-7; the job verdicts cannot name them (copy every rank's export into the job's "
        "folder (a rank the others wait for may be the one missing))"
    ]
    assert not any(line.startswith("all-runs") for line in captured.out.splitlines())
