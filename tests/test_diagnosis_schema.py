"""docs/diagnosis.schema.json describes what diagnose writes (real exports: test_diagnosis_accounting)."""

from __future__ import annotations

import json

from analyzer.cli import main
from analyzer.diagnosis_model import DIAGNOSIS_FORMAT_VERSION
from tests.conftest import ROOT
from tests.json_schema_check import schema_problems

SCHEMA = json.loads((ROOT / "docs" / "diagnosis.schema.json").read_text(encoding="utf-8"))


def _diagnoses(tmp_path):
    main(["diagnose", str(ROOT / "fixtures" / "examples" / "batch_sweep"), "--out", str(tmp_path), "--format", "json"])
    return {p.parent.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(tmp_path.glob("*/diagnosis.json"))}


def test_diagnosis_schema_fits_runs_and_the_all_runs_report(tmp_path):
    docs = _diagnoses(tmp_path)
    assert "all-runs" in docs and len(docs) == 6
    for name, doc in docs.items():
        assert schema_problems(doc, SCHEMA) == [], name


def test_diagnosis_schema_version_is_the_code_version():
    assert SCHEMA["properties"]["format_version"]["const"] == DIAGNOSIS_FORMAT_VERSION


def test_diagnosis_schema_rejects_a_changed_document(tmp_path):
    doc = next(d for name, d in _diagnoses(tmp_path).items() if name != "all-runs")
    doc["summary"]["breakdown"]["parts"][0]["part"] = "busy"
    doc["findings"][0]["severity"] = "fatal"
    del doc["ranking"]
    problems = schema_problems(doc, SCHEMA)
    assert "$: missing 'ranking'" in problems
    assert any(p.startswith("$.findings[0].severity") for p in problems)
    assert any("oneOf" in p for p in problems)  # the summary fits neither a run's nor the all-runs one
