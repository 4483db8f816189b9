"""A job's diagnosis.md (analyzer/report/job_markdown.py), written by diagnose beside job.html when md is asked for."""

from __future__ import annotations

import json

import pytest

from analyzer.cli import main
from tests.conftest import ROOT

JOB = ROOT / "fixtures" / "examples" / "job_slow_rank"


@pytest.mark.slow
def test_job_gets_a_diagnosis_md_with_verdict_findings_ranks_and_rules(tmp_path):
    main(["diagnose", str(JOB), "--out", str(tmp_path), "--format", "json,md", "--quiet"])
    folder = tmp_path / "job_slow_rank"
    assert sorted(p.name for p in folder.iterdir()) == ["diagnosis.json", "diagnosis.md"]
    doc = json.loads((folder / "diagnosis.json").read_text(encoding="utf-8"))
    text = (folder / "diagnosis.md").read_text(encoding="utf-8")
    top = doc["findings"][0]
    verdict = text.split("## Verdict", 1)[1].split("## Summary", 1)[0]
    assert top["code"] in verdict and top["message"] in verdict and top["advice"]["summary"] in verdict
    assert f"{top['impact_us']:.3f} us per step ({top['span_share']:.1%} of the job step)" in verdict
    summary = text.split("## Summary", 1)[1].split("## Ranks", 1)[0]
    assert f"| job step (ms, slowest rank) | {doc['summary']['job_step_us'] / 1000:,.3f} |" in summary
    assert f"| most waited for | rank {doc['summary']['most_waited_for_rank']} |" in summary
    ranks = text.split("## Ranks", 1)[1].split("## Findings", 1)[0]
    for r in doc["run"]["ranks"]:
        assert f"| {r['rank']} |  | summaries only | {r['source_path']} |" in ranks
    assert f"| 1 | {top['severity']} | {top['code']} | {top['rule']} | {top['subject']} |" in text
    for c in doc["completeness"]:
        assert f"| {c['code']} | {c['rule']} | {c['status']} | {c['findings']} |" in text


@pytest.mark.slow  # a whole command: the full suite runs it
def test_job_md_only_when_md_is_asked_for(tmp_path):
    main(["diagnose", str(JOB), "--out", str(tmp_path / "a"), "--format", "md", "--quiet"])
    assert [p.name for p in (tmp_path / "a" / "job_slow_rank").iterdir()] == ["diagnosis.md"]
    main(["diagnose", str(JOB), "--out", str(tmp_path / "b"), "--format", "json", "--quiet"])
    assert [p.name for p in (tmp_path / "b" / "job_slow_rank").iterdir()] == ["diagnosis.json"]
