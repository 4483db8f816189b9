"""Every bundled example and real export: printed parts add up, impacts within the span, JSON fits its schema."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from analyzer.cli import main
from tests.conftest import REAL, ROOT
from tests.json_schema_check import schema_problems

SCHEMA = json.loads((ROOT / "docs" / "diagnosis.schema.json").read_text(encoding="utf-8"))
EXAMPLES = sorted(p for p in (ROOT / "fixtures" / "examples").iterdir() if p.is_dir())
REAL_EXPORTS = sorted(p for p in REAL.iterdir() if p.is_dir()) if REAL.is_dir() else []
_SHARE = re.compile(r"\((\d+\.\d)%\)")
# The breakdown as the terminal and the low-utilization finding print it.
_BREAKDOWN_LINE = re.compile(r"(?:where the time went|in full): (.*)$", re.MULTILINE)


def _shares(text: str) -> list[float]:
    return [float(s) for s in _SHARE.findall(text)]


def _check(folder: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["diagnose", str(folder), "--out", str(out), "--format", "json,md", "--allow-partial"])
    printed = capsys.readouterr().out
    lines = _BREAKDOWN_LINE.findall(printed)
    assert lines, f"{folder.name}: no breakdown printed"
    for line in lines:
        assert round(sum(_shares(line)), 1) == 100.0, f"{folder.name}: {line}"
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(out.glob("*/diagnosis.json"))]
    assert docs, f"{folder.name}: no diagnosis.json"
    for doc in docs:
        assert schema_problems(doc, SCHEMA) == [], doc["run_id"]
    for doc in (d for d in docs if "run_count" not in d["summary"]):  # not the all-runs comparison
        breakdown = doc["summary"]["breakdown"]
        parts = breakdown["parts"]
        assert round(sum(p["pct"] for p in parts), 1) == 100.0, doc["run_id"]
        # the JSON writes 3 decimals per number
        assert sum(p["us"] for p in parts) == pytest.approx(breakdown["span_us"], abs=1e-3 * len(parts))
        impacts = sum(f["impact_us"] for f in doc["findings"])
        assert impacts <= breakdown["span_us"] + 1e-3 * len(doc["findings"]), f"{doc['run_id']}: {impacts}"
        for f in doc["findings"]:
            for line in _BREAKDOWN_LINE.findall(f["message"]):
                assert round(sum(_shares(line)), 1) == 100.0, f["message"]
        markdown = (out / doc["run_id"] / "diagnosis.md").read_text(encoding="utf-8")
        table = markdown.split("(the parts add up to 100%)", 1)[1].split("## Findings", 1)[0]
        assert round(sum(float(s) for s in re.findall(r"\| (\d+\.\d)% \|", table)), 1) == 100.0


@pytest.mark.parametrize("folder", EXAMPLES, ids=lambda p: p.name)
def test_diagnosis_accounting_example_parts_sum_to_whole(folder, tmp_path, capsys):
    _check(folder, tmp_path, capsys)


@pytest.mark.parametrize("folder", REAL_EXPORTS, ids=lambda p: p.name)
def test_diagnosis_accounting_real_export_parts_sum_to_whole(folder, tmp_path, capsys, real_dir):
    _check(folder, tmp_path, capsys)


def test_diagnosis_accounting_covers_every_real_export(real_dir):
    assert len(REAL_EXPORTS) >= 9
