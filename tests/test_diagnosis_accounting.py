"""Every bundled example and real export: printed parts add up, impacts within the span, JSON fits its schema."""

from __future__ import annotations

import io
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from rich.console import Console

from analyzer.diagnosis import diagnose
from analyzer.ingest.loader import load_export, usable_run_ids
from analyzer.report.json_export import render_json
from analyzer.report.markdown import render_markdown
from analyzer.report.terminal import findings_tsv, print_diagnosis
from analyzer.rule_engine.loader import load_rules
from analyzer.rule_engine.model import ConfiguredRules
from tests.conftest import REAL, ROOT
from tests.json_schema_check import schema_problems

SCHEMA = json.loads((ROOT / "docs" / "diagnosis.schema.json").read_text(encoding="utf-8"))
RULES = load_rules(ROOT / "rules")
# The profile examples: every example folder but the accuracy dump sets (accuracy_*, for `npu-triage accuracy`).
EXAMPLES = sorted(
    p for p in (ROOT / "fixtures" / "examples").iterdir() if p.is_dir() and not p.name.startswith("accuracy_")
)
REAL_EXPORTS = sorted(p for p in REAL.iterdir() if p.is_dir()) if REAL.is_dir() else []
_SHARE = re.compile(r"\((\d+\.\d)%\)")
_US = re.compile(r"(-?\d+\.\d{3}) us \(")
_CAUSES = re.compile(r"\((\d+\.\d{3}) us, largest [^)]*\); by cause: (.*)$")
# The breakdown as the terminal and the low-utilization finding print it.
_BREAKDOWN_LINE = re.compile(r"(?:where the time went|in full): (.*)$", re.MULTILINE)


def _assert_adds_up(text: str, where: str, span_us: float) -> int:
    """Every breakdown printed in ``text`` adds up to 100.0%, and its printed times to the printed span
    (``span_us`` with three decimals, as the messages print it); returns how many there were."""
    lines = _BREAKDOWN_LINE.findall(text)
    for line in lines:
        assert round(sum(float(s) for s in _SHARE.findall(line)), 1) == 100.0, f"{where}: {line}"
        assert sum(Decimal(us) for us in _US.findall(line)) == Decimal(f"{span_us:.3f}"), f"{where}: {line}"
    return len(lines)


def _assert_causes_add_up(d, where: str) -> None:
    """The gap causes the inter-op-gap finding prints add up to the gap time it prints."""
    for f in d.findings:
        found = _CAUSES.search(f.message)
        if found:
            total, causes = found.groups()
            assert sum(Decimal(us) for us in _US.findall(causes)) == Decimal(total), f"{where}: {f.message}"


def _check(folder: Path) -> None:
    trace = load_export(folder)
    for run_id in usable_run_ids(trace.con, trace.run_ids):
        d = diagnose(trace.con, run_id, ConfiguredRules(tuple(RULES)))
        console = Console(file=io.StringIO(), width=100_000)  # one line per printed line
        print_diagnosis(d, console)
        span_us = d.summary.breakdown.span_us
        assert _assert_adds_up(console.file.getvalue(), run_id, span_us) >= 1, "the terminal prints the breakdown"
        _assert_adds_up(findings_tsv([d]), run_id, span_us)
        _assert_causes_add_up(d, run_id)
        doc = json.loads(render_json(d))
        assert schema_problems(doc, SCHEMA) == [], run_id
        breakdown = doc["summary"]["breakdown"]
        parts = breakdown["parts"]
        assert round(sum(p["pct"] for p in parts), 1) == 100.0, run_id
        # the JSON writes 4 decimals per number
        assert sum(p["us"] for p in parts) == pytest.approx(breakdown["span_us"], abs=1e-3)
        assert sum(f.impact_us for f in d.findings) <= d.summary.breakdown.span_us * (1 + 1e-9), run_id
        table = render_markdown(d).split("(the parts add up to 100%)", 1)[1].split("## Findings", 1)[0]
        assert round(sum(float(s) for s in re.findall(r"\| (\d+\.\d)% \|", table)), 1) == 100.0, run_id
        printed_us = re.findall(r"\| (-?\d+\.\d{3}) \| \d+\.\d% \|", table)
        assert sum(Decimal(us) for us in printed_us) == Decimal(f"{span_us:.3f}"), run_id


@pytest.mark.slow  # a whole command or process: the full suite runs it
@pytest.mark.parametrize("folder", EXAMPLES, ids=lambda p: p.name)
def test_diagnosis_accounting_example_parts_sum_to_whole(folder):
    _check(folder)


@pytest.mark.parametrize("folder", REAL_EXPORTS, ids=lambda p: p.name)
def test_diagnosis_accounting_real_export_parts_sum_to_whole(folder, real_dir):
    _check(folder)


def test_diagnosis_accounting_covers_every_real_export(real_dir):
    assert len(REAL_EXPORTS) >= 9
