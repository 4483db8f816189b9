"""docs/diagnosis.schema.json describes what diagnose writes (real exports: test_diagnosis_accounting)."""

from __future__ import annotations

import json

import pytest

from analyzer.cli import main
from analyzer.diagnosis_model import DIAGNOSIS_FORMAT_VERSION
from analyzer.report.terminal import memory_lines
from tests.conftest import ROOT
from tests.json_schema_check import schema_problems

SCHEMA = json.loads((ROOT / "docs" / "diagnosis.schema.json").read_text(encoding="utf-8"))


def _diagnoses(tmp_path):
    main(["diagnose", str(ROOT / "fixtures" / "examples" / "batch_sweep"), "--out", str(tmp_path), "--format", "json"])
    return {p.parent.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(tmp_path.glob("*/diagnosis.json"))}


@pytest.mark.slow
def test_diagnosis_schema_fits_runs_and_the_all_runs_report(tmp_path):
    docs = _diagnoses(tmp_path)
    assert "all-runs" in docs and len(docs) == 6
    for name, doc in docs.items():
        assert schema_problems(doc, SCHEMA) == [], name


@pytest.mark.slow  # diagnose over every bundled example
def test_diagnosis_schema_fits_every_report_of_the_examples(tmp_path):
    """Runs, the all-runs report and the job of fixtures/examples, as one diagnose over them writes them."""
    main(["diagnose", str(ROOT / "fixtures" / "examples"), "--out", str(tmp_path), "--format", "json", "--quiet"])
    paths = sorted(tmp_path.rglob("diagnosis.json"))
    docs = {p.parent.name: json.loads(p.read_text(encoding="utf-8")) for p in paths}
    assert {"all-runs", "job_slow_rank"} <= set(docs) and len(docs) >= 10
    assert docs["job_slow_rank"]["run"]["scope"] == "job" and docs["job_slow_rank"]["findings"]
    for name, doc in docs.items():
        assert schema_problems(doc, SCHEMA) == [], name
    job = docs["job_slow_rank"]
    job["summary"]["rank_count"] = "8"
    job["findings"][0]["category"] = "jobs"
    problems = schema_problems(job, SCHEMA)
    assert any("oneOf" in p for p in problems) and any(p.startswith("$.findings[0].category") for p in problems)


def test_diagnosis_schema_version_is_the_code_version():
    assert SCHEMA["properties"]["format_version"]["const"] == DIAGNOSIS_FORMAT_VERSION


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_diagnosis_schema_rejects_a_changed_document(tmp_path):
    doc = next(d for name, d in _diagnoses(tmp_path).items() if name != "all-runs")
    doc["summary"]["breakdown"]["parts"][0]["part"] = "busy"
    doc["findings"][0]["severity"] = "fatal"
    del doc["ranking"]
    problems = schema_problems(doc, SCHEMA)
    assert "$: missing 'ranking'" in problems
    assert any(p.startswith("$.findings[0].severity") for p in problems)
    assert any("oneOf" in p for p in problems)  # the summary fits neither a run's nor the all-runs one


@pytest.mark.slow
def test_diagnosis_memory_summary_fits_the_schema_and_the_written_files(tmp_path):
    from fixtures.generator.matrix import Cell, write_cell
    from tests.test_memory_report import _alive, _plain_peak, _read_csv

    (root,) = write_cell(Cell("near_oom", "cnn", 4, "torch_npu"), tmp_path / "in", seed=11)
    main(["diagnose", str(root), "--out", str(tmp_path / "out"), "--format", "json,md", "--quiet"])
    (path,) = sorted((tmp_path / "out").glob("*/diagnosis.json"))
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert schema_problems(doc, SCHEMA) == []
    (device,) = doc["summary"]["memory"]["devices"]
    alloc, at_us, reserved = _plain_peak(
        _read_csv(next(root.rglob("memory_record.csv"))), "Total Allocated(MB)", "Total Reserved(MB)", 1.0
    )
    alive = _alive(_read_csv(next(root.rglob("operator_memory.csv"))), at_us)
    assert alive
    assert abs(device["peak_allocated_mb"] - alloc) < 0.1 and abs(device["peak_reserved_mb"] - reserved) < 0.1
    assert device["alive_count"] == len(alive) and abs(device["alive_mb"] - sum(s for _, s in alive) / 1024) < 0.1
    markdown = (path.parent / "diagnosis.md").read_text(encoding="utf-8")
    assert "## Memory" in markdown and f"{alloc:,.1f} MB at {device['peak_allocated_ms']:,.3f} ms" in markdown
    (line,) = memory_lines(doc["summary"]["memory"])  # the terminal's line
    assert f"{alloc:,.1f} MB allocated" in line and f"{len(alive)} operator allocations alive" in line
    device["holders"][0]["size_mb"] = "big"
    assert any(p.startswith("$.summary") or "oneOf" in p for p in schema_problems(doc, SCHEMA))


def test_diagnosis_memory_summary_of_a_real_export_equals_plain_csv(real_dir, tmp_path):
    from tests.test_memory_report import _alive, _plain_peak, _read_csv

    out = real_dir / "torch_npu_level1_rank0_text" / "ASCEND_PROFILER_OUTPUT"
    main(["diagnose", str(out.parent), "--out", str(tmp_path), "--format", "json", "--quiet"])
    (path,) = sorted(tmp_path.glob("*/diagnosis.json"))
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert schema_problems(doc, SCHEMA) == []
    (device,) = doc["summary"]["memory"]["devices"]
    alloc, at_us, reserved = _plain_peak(
        _read_csv(out / "memory_record.csv"), "Total Allocated(MB)", "Total Reserved(MB)", 1.0
    )
    alive = sorted(_alive(_read_csv(out / "operator_memory.csv"), at_us), key=lambda a: (-a[1], a[0]))
    assert abs(device["peak_allocated_mb"] - alloc) < 0.1 and abs(device["peak_reserved_mb"] - reserved) < 0.1
    assert device["alive_count"] == len(alive) > 0
    held = [(h["op_name"], h["size_mb"]) for h in device["holders"]]
    expected = [(n, s / 1024) for n, s in alive]
    assert all(abs(a[1] - b[1]) < 0.001 for a, b in zip(held, expected[:15], strict=True))  # the largest, first
    assert all(any(n == name and abs(s - size) < 0.001 for name, size in expected) for n, s in held)
