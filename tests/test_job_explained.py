"""One cause, one finding: a job finding explains its ranks' findings ([explains] of the job rules)."""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from pathlib import Path

import pytest

import analyzer
from analyzer.job.explained import job_explanations
from analyzer.report.html_sections import _message
from analyzer.report.job_terminal import rank_finding_lines
from analyzer.report.json_export import render_json
from analyzer.report.markdown import render_markdown
from analyzer.report.terminal import tripping_findings
from analyzer.rule_engine.loader import load_rules, rule_from_document
from analyzer.rule_engine.validation import validate_rule
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan
from tests.json_schema_check import schema_problems

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "docs" / "diagnosis.schema.json").read_text(encoding="utf-8"))


def _judged(tmp_path: Path, scenario: str, ranks: int, seed: int):
    """The job's diagnosis and its ranks' (each rank carrying kernel_details.csv), and the truth."""
    root = write_job(job_plan(scenario, ranks, seed, 2), tmp_path, kernels=3)
    trace = analyzer.load(root)
    try:
        job, *runs = analyzer.diagnose_all(trace)
    finally:
        trace.close()
    return job, runs, json.loads((root / "job_truth.json").read_text())


def _rank(run_id: str) -> int:
    return int(run_id.split("_")[0].removeprefix("rank"))


@pytest.mark.parametrize(
    ("ranks", "seed"), [(8, 0), pytest.param(4, 3, marks=pytest.mark.slow), pytest.param(12, 5, marks=pytest.mark.slow)]
)
def test_ranks_waiting_for_the_slow_rank_carry_no_warning_of_their_own(tmp_path, ranks, seed):
    job, runs, truth = _judged(tmp_path, "job_slow_rank", ranks, seed)
    slow = truth["slow_rank"]
    assert [(f.code, f.subject) for f in job.findings] == [("JOB001", f"rank {slow}")]
    assert sorted(_rank(d.run_id) for d in runs) == list(range(ranks))
    for d in runs:
        com = [f for f in d.findings if f.category == "communication"]
        assert len(com) == 1, d.run_id
        if _rank(d.run_id) == slow:  # its own exposed communication is not a wait for itself
            assert (com[0].severity, com[0].explained_by) == ("warning", None)
        else:
            assert com[0].severity == "info"
            assert com[0].explained_by.text == f"explained by JOB001: waiting for rank {slow}"
            assert com[0].explained_by.severity == "warning"
            assert d.findings[-1] is com[0]  # ranked below the rank's unexplained findings
    tripped = tripping_findings([job, *runs], "warning")
    assert sorted((f.code, f.subject if f.code == "JOB001" else _rank(r)) for r, f in tripped) == sorted(
        [("JOB001", f"rank {slow}"), ("COM001", slow)]
    )


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_explained_finding_keeps_its_numbers_and_says_so_in_json_and_markdown(tmp_path):
    job, runs, truth = _judged(tmp_path / "a", "job_slow_rank", 8, 0)
    waiting = next(d for d in runs if _rank(d.run_id) != truth["slow_rank"])
    doc = json.loads(render_json(waiting))
    assert schema_problems(doc, SCHEMA) == []
    (com,) = [f for f in doc["findings"] if f["code"] == "COM001"]
    assert com["severity"] == "info" and com["impact_us"] > 0.3 * (doc["summary"]["span_us"] or 0)
    assert com["explained_by"] == {
        "code": "JOB001",
        "rule": "slow-rank",
        "subject": f"rank {truth['slow_rank']}",
        "note": f"waiting for rank {truth['slow_rank']}",
        "severity": "warning",
        "text": f"explained by JOB001: waiting for rank {truth['slow_rank']}",
    }
    assert f"*explained by JOB001: waiting for rank {truth['slow_rank']}* (warning on its own" in render_markdown(
        waiting
    )
    (explained,) = [f for f in waiting.findings if f.explained_by]
    assert f"explained by JOB001: waiting for rank {truth['slow_rank']} (warning on its own)" in _message(explained)
    lines = rank_finding_lines(job, runs)
    assert lines[-1].startswith("skipped: CMP003")  # the rules the ranks skipped, as under many runs
    assert lines[1:-1] == [
        f"  COM001 communication-not-overlapped: 8 rank(s): 1 warning, 7 info; "
        f"7 explained by JOB001: waiting for rank {truth['slow_rank']}"
    ]


def test_near_miss_a_balanced_job_keeps_its_ranks_communication_warnings(tmp_path):
    job, runs, _ = _judged(tmp_path, "job_balanced", 8, 2)
    assert job.findings == () and job.explains == ()
    assert Counter((f.code, f.severity, f.explained_by) for d in runs for f in d.findings) == {
        ("COM001", "warning", None): 8
    }


@pytest.mark.slow  # a generated job diagnosed whole
def test_other_stages_wait_for_the_slow_pipeline_stage(tmp_path):
    job, runs, truth = _judged(tmp_path, "job_pipeline_imbalance", 8, 1)
    slow_ranks = {r for r in range(8) if r // 2 == truth["slow_stage"]}
    (finding,) = job.findings
    note = f"explained by JOB003: waiting for pipeline {finding.subject}"
    explained = {_rank(d.run_id) for d in runs for f in d.findings if f.explained_by and f.explained_by.text == note}
    assert explained == set(range(8)) - slow_ranks
    assert all(f.explained_by is None for d in runs if _rank(d.run_id) in slow_ranks for f in d.findings)


@pytest.mark.slow  # a generated job diagnosed whole
def test_ranks_of_the_groups_over_a_slow_link_wait_for_it(tmp_path):
    job, runs, truth = _judged(tmp_path, "job_slow_link", 16, 0)
    a, b = truth["slow_link"]
    note = f"explained by JOB002: waiting for the slow link rank {a} <-> rank {b} (RDMA)"
    assert [f.code for f in job.findings] == ["JOB002"]
    found = Counter(
        (f.code, f.severity, f.explained_by.text if f.explained_by else None) for d in runs for f in d.findings
    )
    assert found[("COM001", "info", note)] == 16  # one data-parallel ring: every rank's collectives cross it
    assert not [k for k in found if k[0] == "COM001" and k[1] != "info"]
    assert all(f.explained_by is None for d in runs for f in d.findings if f.category != "communication")


@pytest.mark.slow  # a generated job diagnosed whole
def test_other_replicas_wait_for_the_slow_replica_and_its_own_ranks_keep_their_warnings(tmp_path):
    job, runs, truth = _judged(tmp_path, "job_replica_skew", 8, 0)
    (finding,) = job.findings
    note = f"explained by JOB005: waiting for data-parallel {finding.subject}"
    severities = {
        _rank(d.run_id): (f.severity, f.explained_by and f.explained_by.text) for d in runs for f in d.findings
    }
    own = set(truth["replica_ranks"])
    assert severities == {r: ("warning", None) if r in own else ("info", note) for r in range(8)}


@pytest.mark.slow  # a generated job diagnosed whole
def test_summary_only_job_explains_no_run_and_its_reports_are_unchanged(tmp_path):
    """The bundled example's ranks hold summaries only: the verdict names the waiting ranks, none is a run."""
    trace = analyzer.load(ROOT / "fixtures" / "examples" / "job_slow_rank")
    try:
        (job,) = analyzer.diagnose_all(trace)
        (explains,) = job_explanations(trace.con, job, load_rules(ROOT / "rules"))
    finally:
        trace.close()
    assert (explains.by.code, explains.by.note, explains.run_ids) == ("JOB001", "waiting for rank 2", ())
    assert "explained_by" not in render_json(job)


def _slow_rank_doc() -> dict:
    return tomllib.loads((ROOT / "rules" / "job" / "slow-rank.toml").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d["explains"].update(categories=["job"]), "[explains] category 'job' is not one of"),
        (lambda d: d["explains"].pop("note"), "[explains] note is missing or empty"),
        (lambda d: d["explains"].update(why="x"), "[explains] why is not a known key"),
        (lambda d: d["rule"].update(scope="run", category="communication"), "[explains] is for rules of scope 'job'"),
    ],
)
def test_rules_check_names_a_bad_explains_table(change, problem):
    doc = _slow_rank_doc()
    assert not [p for p in validate_rule(rule_from_document(doc)) if "[explains]" in p]
    change(doc)
    assert any(p.startswith(problem) for p in validate_rule(rule_from_document(doc))), problem


def test_rules_show_says_what_a_job_rule_explains():
    from analyzer.report.rules_doc import render_rule_page

    page = render_rule_page(rule_from_document(_slow_rank_doc()))
    assert "## Explains\n\nThe communication findings of the ranks" in page
    assert "`explained by JOB001: waiting for {subject}`" in page


@pytest.mark.slow  # a generated job diagnosed whole
def test_a_user_rules_failing_explains_query_explains_nothing_and_breaks_nothing(tmp_path):
    from dataclasses import replace

    rules = [
        replace(r, explains=replace(r.explains, sql="SELECT no_such_column AS rank FROM job_ranks ORDER BY rank"))
        for r in load_rules(ROOT / "rules")
    ]
    root = write_job(job_plan("job_slow_rank", 4, 3, 2), tmp_path, kernels=3)
    trace = analyzer.load(root)
    try:
        job, *runs = analyzer.diagnose_all(trace, rule_set=rules)
    finally:
        trace.close()
    assert [f.code for f in job.findings] == ["JOB001"] and [len(e.run_ids) for e in job.explains] == [0]
    assert [(f.severity, f.explained_by) for d in runs for f in d.findings if f.code == "COM001"] == [
        ("warning", None)
    ] * 4
