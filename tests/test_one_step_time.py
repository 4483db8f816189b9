"""One run's step time agrees, to the printed precision, wherever it is printed: diagnose, diff, sweep, runs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from analyzer.cli import main


def _tsv_value(text: str, column: str) -> float:
    header, row = text.strip().splitlines()[:2]
    return float(row.split("\t")[header.split("\t").index(column)])


def _agrees(printed: str, unit_us: float, truth_us: float) -> bool:
    """Whether ``printed`` (in units of ``unit_us``) is ``truth_us`` rounded to the digits it shows."""
    digits = len(printed.split(".")[1]) if "." in printed else 0
    return abs(float(printed) * unit_us - truth_us) <= 0.5 * 10.0**-digits * unit_us + 1e-9


def test_step_time_of_one_run_agrees_in_diagnose_diff_sweep_and_runs(real_dir, tmp_path, capsys):
    root = tmp_path / "runs"
    shutil.copytree(real_dir / "torch_npu_level1_rank0_text", root / "r0")
    assert main(["diagnose", str(root / "r0"), "--format", "md", "--out", str(tmp_path / "d")]) in (0, 1)
    md = next((tmp_path / "d").rglob("*.md")).read_text()
    diagnose = re.search(r"\| span of the step \(us, [^)]*\) \| ([0-9.]+) \|", md).group(1)
    truth = float(diagnose)  # a single step: the diagnosis's step span is the step time

    catalog = tmp_path / "c.duckdb"
    assert main(["batch", str(root), "--catalog", str(catalog), "--jobs", "1", "--no-diagnose"]) in (0, 3)
    capsys.readouterr()
    assert main(["runs", str(catalog)]) == 0
    runs_out = capsys.readouterr().out
    run_id = runs_out.strip().splitlines()[1].split("\t")[0]
    runs = runs_out.strip().splitlines()[1].split("\t")[runs_out.splitlines()[0].split("\t").index("step_time_p50_us")]

    assert main(["diff", f"{catalog}:{run_id}", f"{catalog}:{run_id}", "--markdown", str(tmp_path / "x.md")]) == 0
    diff = re.search(r"step time \(median\): ([0-9.]+) ms", (tmp_path / "x.md").read_text()).group(1)

    capsys.readouterr()
    assert main(["sweep", f"{root / 'r0'}:bs=1"]) == 0
    sweep_out = capsys.readouterr().out
    sweep = sweep_out.splitlines()[1].split("\t")[sweep_out.splitlines()[0].split("\t").index("step_time_us")]

    printed = {"diagnose": (diagnose, 1.0), "runs": (runs, 1.0), "diff": (diff, 1000.0), "sweep": (sweep, 1.0)}
    assert all(_agrees(v, unit, truth) for v, unit in printed.values()), printed


@pytest.mark.slow  # a whole command: the full suite runs it
def test_catalog_steps_add_up_to_the_diagnosis_span_and_share_on_an_example(tmp_path, capsys):
    import duckdb

    example = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "resnet_host_sync"
    assert main(["diagnose", str(example), "--format", "json", "--out", str(tmp_path / "d")]) in (0, 1)
    summary = json.loads(next((tmp_path / "d").rglob("diagnosis.json")).read_text())["summary"]
    catalog = tmp_path / "c.duckdb"
    assert main(["batch", str(example), "--catalog", str(catalog), "--jobs", "1", "--no-diagnose"]) == 0
    con = duckdb.connect(str(catalog), read_only=True)
    steps_us, busy = con.execute(
        "SELECT (SELECT sum(step_time_us) FROM step_times), (SELECT any_value(busy_ratio) FROM run_metrics)"
    ).fetchone()
    assert summary["span_basis"] == "steps"  # several steps: the diagnosis's span is their sum
    assert round(steps_us, 3) == summary["span_us"] and round(busy, 4) == summary["computing_ratio"]
