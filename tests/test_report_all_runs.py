"""The all-runs report: written only when a rule comparing runs has a finding; holding only that."""

from __future__ import annotations

import json
import re

import pytest

from analyzer.cli import main
from analyzer.diagnosis import diagnose_runs
from analyzer.ingest import load_export
from analyzer.report.html import CHARTS
from analyzer.rule_engine.loader import default_rules_dir, load_rules
from analyzer.rule_engine.model import ConfiguredRules
from analyzer.rule_engine.runner import run_rules
from tests.tiny_exports import write_tiny_export

HOSTILE = "<img src=x onerror=alert(1)>"


def _two_runs(root, model=None, sizes=(None, None)):
    for i, size in enumerate(sizes):
        write_tiny_export(root / f"run{i}_ascend_pt", seed=i, steps=3, model=model, batch_size=size)
    return root


def _main_html(page: str) -> str:
    return page[page.index("<main>") :]


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_all_runs_two_batch_sizes_report_holds_only_the_comparison(tmp_path, capsys):
    runs = _two_runs(tmp_path / "in", model=HOSTILE, sizes=(1, 8))
    assert main(["diagnose", str(runs), "--out", str(tmp_path / "out")]) == 0
    folder = tmp_path / "out" / "all-runs"
    doc = json.loads((folder / "diagnosis.json").read_text())
    assert [f["rule"] for f in doc["findings"]] == ["batch-size-scaling"]
    assert [o["rule"] for o in doc["completeness"]] == ["batch-size-scaling"]
    assert doc["summary"] == {"run_count": 2}
    md = (folder / "diagnosis.md").read_text()
    assert "## Runs compared" in md and "run0_ascend_pt" in md
    assert "## Summary" not in md and "profiled span" not in md
    page = _main_html((folder / "report.html").read_text())
    assert 'id="finding-1-chart-scaling"' in page and "Runs compared" in page
    assert not any(f'id="chart-{key.replace("_", "-")}"' in page for key in CHARTS)
    assert "<h3>Run</h3>" not in page and 'id="problems"' not in page
    assert "not collected" not in page
    assert HOSTILE not in page
    traces = re.search(r'"finding-1-chart-scaling",\s*(\[.*?\]),\s*\{', page, re.S).group(1)
    assert [t["x"] for t in json.loads(traces)] == [[1, 8]] * 4
    assert "all-runs\t1\tinfo\tSCH003\tbatch-size-scaling\t" in capsys.readouterr().out  # TSV into a pipe


@pytest.mark.slow
def test_all_runs_without_batch_sizes_is_neither_written_nor_printed(tmp_path, capsys):
    runs = _two_runs(tmp_path / "in")
    assert main(["diagnose", str(runs), "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["run0_ascend_pt", "run1_ascend_pt"]
    assert not any(line.startswith("all-runs") for line in capsys.readouterr().out.splitlines())


@pytest.mark.slow
def test_diagnose_runs_one_batch_size_ran_but_nothing_to_compare_is_none(tmp_path):
    ingested = load_export(_two_runs(tmp_path, model="m", sizes=(8, 8)))
    rules = [r for r in load_rules(default_rules_dir()) if r.scope == "runs"]
    findings, outcomes = run_rules(ingested.con, ConfiguredRules(tuple(rules)), ingested.run_ids)
    assert not findings and {o.status for o in outcomes} == {"ran"}
    assert diagnose_runs(ingested.con, ingested.run_ids, ConfiguredRules(tuple(rules))) is None
