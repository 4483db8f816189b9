"""One cause, one finding: a job finding explains its ranks' findings ([explains] of the job rules)."""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

import analyzer
from analyzer.job.explained import _explained, job_explanations
from analyzer.report.html_sections import _message
from analyzer.report.job_terminal import rank_finding_lines
from analyzer.report.json_export import render_json
from analyzer.report.markdown import render_markdown
from analyzer.report.terminal import tripping_findings
from analyzer.rule_engine.fixture_tables import load_fixture_tables
from analyzer.rule_engine.loader import load_rules, rule_from_document
from analyzer.rule_engine.model import ConfiguredRules, ExplainedBy, Explanation
from analyzer.rule_engine.runner import bind_params, run_rules
from analyzer.rule_engine.validation import validate_explains, validate_rule
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan
from tests.json_schema_check import schema_problems
from tests.report_cases import finding
from tests.rule_cases import FIXTURES_DIR as FIXTURES
from tests.rule_cases import RULES

COM001 = ("communication-not-overlapped", "COM001", "warning", "communication", "Communication not hidden", "ratio")

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


def _adds_up(by) -> bool:
    """The printed parts add up: the wait and the rank's own part make the finding's amount (to 0.1 ms)."""
    return round(by.explained_ms + by.own_ms, 1) == by.amount_ms and 0 < by.explained_ms <= by.amount_ms


@pytest.mark.slow
@pytest.mark.parametrize(
    ("ranks", "seed"), [(8, 0), pytest.param(4, 3, marks=pytest.mark.slow), pytest.param(12, 5, marks=pytest.mark.slow)]
)
def test_ranks_waiting_for_the_slow_rank_carry_a_warning_for_their_own_part_only(tmp_path, ranks, seed):
    """Every rank's exposed communication is its transfers plus, on the others, the wait for the slow rank: the
    wait is the job finding's, what is left (the transfers, which the slow rank pays too) stays a warning."""
    job, runs, truth = _judged(tmp_path, "job_slow_rank", ranks, seed)
    slow = truth["slow_rank"]
    assert [(f.code, f.subject) for f in job.findings] == [("JOB001", f"rank {slow}")]
    assert sorted(_rank(d.run_id) for d in runs) == list(range(ranks))
    (own,) = [f for d in runs if _rank(d.run_id) == slow for f in d.findings if f.category == "communication"]
    assert (own.severity, own.explained_by) == ("warning", None)  # its own exposed communication: no wait for itself
    caused = job.findings[0].impact_us
    for d in runs:
        if _rank(d.run_id) == slow:
            continue
        (com,) = [f for f in d.findings if f.category == "communication"]
        by = com.explained_by
        assert (com.severity, by.code, by.note, by.partial) == ("warning", "JOB001", f"waiting for rank {slow}", True)
        assert by.text == (
            f"partly explained by JOB001: {by.explained_ms:.1f} of its {by.amount_ms:.1f} ms per step of exposed "
            f"communication is waiting for rank {slow}; {by.own_ms:.1f} ms is its own"
        )
        assert _adds_up(by) and abs(by.explained_ms * 1000 - caused) < 0.1 * caused  # its wait, about the caused one
        # ranked and counted by what is left: the same transfers as the slow rank's (within 1%)
        assert com.impact_us == pytest.approx(own.impact_us, rel=0.01) and com.details["impact_before_explained_us"]
        assert d.findings[0] is com
    tripped = tripping_findings([job, *runs], "warning")
    assert sorted((f.code, f.subject if f.code == "JOB001" else _rank(r)) for r, f in tripped) == sorted(
        [("JOB001", f"rank {slow}"), *[("COM001", r) for r in range(ranks)]]
    )


@pytest.mark.slow
def test_a_rank_whose_wait_covers_its_finding_is_explained_and_the_rest_stays_a_warning(tmp_path):
    """The slow rank computes 3x: the others compute under 30% of the step (CMP001) only because they wait,
    so that finding is explained; their transfers alone would still be exposed communication (COM001 stays)."""
    root = write_job(replace(job_plan("job_slow_rank", 4, 3, 2), slow_factor=3.0), tmp_path, kernels=3)
    slow = json.loads((root / "job_truth.json").read_text())["slow_rank"]
    trace = analyzer.load(root)
    try:
        job, *runs = analyzer.diagnose_all(trace)
    finally:
        trace.close()
    for d in runs:
        found = {f.code: f for f in d.findings}
        if _rank(d.run_id) == slow:  # it waits for no one: computing most of the step, little exposed
            assert all(f.explained_by is None for f in d.findings)
            continue
        cmp, com = found["CMP001"], found["COM001"]
        assert (cmp.severity, cmp.explained_by.partial, cmp.explained_by.severity) == ("info", False, "warning")
        assert cmp.explained_by.text.startswith(f"explained by JOB001: {cmp.explained_by.explained_ms:.1f} of its ")
        assert "ms per step of time not computing is waiting for rank" in cmp.explained_by.text
        assert (com.severity, com.explained_by.partial) == ("warning", True)
        # the wait is most of the exposed communication, yet what is left still passes COM001's threshold
        assert com.explained_by.explained_ms > 0.7 * com.explained_by.amount_ms
        assert _adds_up(cmp.explained_by) and _adds_up(com.explained_by)
        assert [f.code for f in d.findings] == ["COM001", "CMP001"]  # the explained one last


@pytest.mark.parametrize(
    ("wait_us", "explained"),
    [(12_500.0, True), (12_000.0, False)],  # left 17.5 of 87.5 ms: 20%, not above; 18 of 88: above 20%
)
def test_explained_when_what_is_left_would_not_fire_near_miss_just_above(wait_us, explained):
    """COM001 at 30 ms of a 100 ms step, threshold 20%: taken off its amount and its span, a 12.5 ms wait leaves
    exactly 20% (would not fire: explained); a 12 ms wait leaves 20.45% (would fire: partly explained)."""
    f = replace(finding(COM001, "rank0", 1, "1 steps"), impact_us=30_000.0, span_share=0.3, threshold=0.2)
    by = ExplainedBy("JOB001", "slow-rank", "rank 1", "waiting for rank 1", "")
    e = Explanation(
        by,
        ("communication",),
        ("rank0",),
        {"rank0": wait_us},
        {f.rule: ("exposed communication", "lower_is_better")},
        1,
    )
    got = _explained(f, [e], (1, 100_000.0))
    assert (got.severity == "info", got.explained_by.partial) == (explained, not explained)
    assert got.impact_us == (30_000.0 if explained else 18_000.0)
    assert got.explained_by.text.endswith(f"is waiting for rank 1; {30 - wait_us / 1000:.1f} ms is its own")


def test_a_finding_of_a_rule_without_waits_is_not_explained_by_an_amount():
    """A finding whose impact is another kind of time (an operator type's) holds no wait: left alone."""
    f = finding(("aicpu-operators", "CMP002", "warning", "compute", "AI CPU operators", "us"), "rank0", 1, "Cast")
    by = ExplainedBy("JOB001", "slow-rank", "rank 1", "waiting for rank 1", "")
    e = Explanation(
        by, ("compute",), ("rank0",), {"rank0": 50_000.0}, {"low-aicore-utilization": ("x", "higher_is_better")}, 1
    )
    assert _explained(f, [e], (1, 100_000.0)) is f


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_explained_finding_says_so_in_json_markdown_html_and_the_terminal(tmp_path):
    job, runs, truth = _judged(tmp_path / "a", "job_slow_rank", 8, 0)
    slow = truth["slow_rank"]
    waiting = next(d for d in runs if _rank(d.run_id) != slow)
    doc = json.loads(render_json(waiting))
    assert schema_problems(doc, SCHEMA) == []
    (com,) = [f for f in doc["findings"] if f["code"] == "COM001"]
    by = com["explained_by"]
    assert com["severity"] == "warning" and com["impact_us"] == pytest.approx(by["own_ms"] * 2000, abs=200)
    assert {k: by[k] for k in ("code", "rule", "subject", "note", "severity", "per", "waits", "partial")} == {
        "code": "JOB001",
        "rule": "slow-rank",
        "subject": f"rank {slow}",
        "note": f"waiting for rank {slow}",
        "severity": "warning",
        "per": "per step",
        "waits": "exposed communication",
        "partial": True,
    }
    assert (
        by["text"].startswith("partly explained by JOB001: ")
        and round(by["explained_ms"] + by["own_ms"], 1) == by["amount_ms"]
    )
    assert f"*{by['text']}* (recoverable: its own part; see the job's diagnosis)" in render_markdown(waiting)
    (explained,) = [f for f in waiting.findings if f.explained_by]
    assert f"{by['text']} (recoverable: its own part)" in _message(explained)
    lines = rank_finding_lines(job, runs)
    assert lines[-1].startswith("skipped: CMP003")  # the rules the ranks skipped, as under many runs
    (line,) = lines[1:-1]
    head = "  COM001 communication-not-overlapped: 8 rank(s): 8 warning; 7 partly explained by JOB001: "
    assert line.startswith(f"{head}waiting for rank {slow} (")
    assert line.endswith("ms per step of exposed communication; 30.9 ms their own)")


@pytest.mark.slow
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
    note = f"waiting for pipeline {finding.subject}"
    explained = {_rank(d.run_id): f for d in runs for f in d.findings if f.explained_by and f.explained_by.note == note}
    assert set(explained) == set(range(8)) - slow_ranks
    assert all(_adds_up(f.explained_by) for f in explained.values())
    assert all(f.explained_by is None for d in runs if _rank(d.run_id) in slow_ranks for f in d.findings)


@pytest.mark.slow  # a generated job diagnosed whole
def test_ranks_of_the_groups_over_a_slow_link_wait_for_it(tmp_path):
    """The link costs every rank of its ring the same time: their low computing share (CMP001) is that wait
    (explained); their exposed communication is partly their own transfers (a warning for that part)."""
    job, runs, truth = _judged(tmp_path, "job_slow_link", 16, 0)
    a, b = truth["slow_link"]
    note = f"waiting for the slow link rank {a} <-> rank {b} (RDMA)"
    assert [f.code for f in job.findings] == ["JOB002"]
    found = Counter((f.code, f.severity, f.explained_by.note, f.explained_by.partial) for d in runs for f in d.findings)
    assert found == {("COM001", "warning", note, True): 16, ("CMP001", "info", note, False): 16}
    waits = {f.explained_by.explained_ms for d in runs for f in d.findings}
    assert waits == {round(job.findings[0].impact_us / 1000, 1)}  # the link's excess, on every rank


@pytest.mark.slow  # a generated job diagnosed whole
def test_other_replicas_wait_for_the_slow_replica_and_its_own_ranks_keep_their_warnings(tmp_path):
    job, runs, truth = _judged(tmp_path, "job_replica_skew", 8, 0)
    (finding,) = job.findings
    note = f"waiting for data-parallel {finding.subject}"
    got = {
        _rank(d.run_id): (f.severity, f.explained_by and (f.explained_by.note, f.explained_by.partial))
        for d in runs
        for f in d.findings
    }
    own = set(truth["replica_ranks"])
    assert got == {r: ("warning", None) if r in own else ("warning", (note, True)) for r in range(8)}
    # what the other replicas' ranks keep is their transfers: about the slow replica's own exposed communication
    left = {_rank(d.run_id): d.findings[0].impact_us for d in runs}
    assert max(left.values()) < 1.05 * min(left.values())


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
        (lambda d: d["impact"].update(waits="job wait"), "[impact] waits is for rules of scope 'run'"),
    ],
)
def test_rules_check_names_a_bad_explains_table(change, problem):
    doc = _slow_rank_doc()
    assert not [p for p in validate_rule(rule_from_document(doc)) if "[explains]" in p]
    change(doc)
    assert any(p.startswith(problem) for p in validate_rule(rule_from_document(doc))), problem


def test_rules_check_names_explains_columns_and_a_waits_rule_that_is_no_share():
    rule = rule_from_document(_slow_rank_doc())
    assert validate_explains(rule, ["subject"], ["rank", "explained_us"]) == []
    (problem,) = validate_explains(rule, ["subject"], ["rank", "wait_us"])
    assert (
        problem.startswith("[explains] sql must return the columns rank, explained_us")
        and "not rank, wait_us" in problem
    )
    assert validate_explains(rule, ["subject"], ["rank", "explained_us"], ["INTEGER", "DECIMAL(38,1)"]) == []
    (problem,) = validate_explains(rule, ["subject"], ["rank", "explained_us"], ["INTEGER", "VARCHAR"])
    assert problem == "[explains] explained_us must be a number (microseconds), not VARCHAR"
    doc = tomllib.loads((ROOT / "rules" / "compute" / "low-aicore-utilization.toml").read_text(encoding="utf-8"))
    assert validate_rule(rule_from_document(doc)) == []
    doc["finding"]["unit"] = "us"
    assert "[impact] waits needs a ratio finding with a threshold_param" in " ".join(
        validate_rule(rule_from_document(doc))
    )


def test_rules_show_says_what_a_job_rule_explains():
    from analyzer.report.rules_doc import render_rule_page

    page = render_rule_page(rule_from_document(_slow_rank_doc()))
    assert "## Explains\n\nThe communication, compute findings of the ranks" in page
    assert "`explained by JOB001: … is waiting for {subject}`" in page


@pytest.mark.slow  # a generated job diagnosed whole
def test_a_user_rules_failing_explains_query_explains_nothing_and_breaks_nothing(tmp_path):
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


_ONE_COLUMN = """
SELECT rank FROM job_ranks WHERE run_id = $run_id AND 'rank ' || rank <> $subject ORDER BY rank
"""


@pytest.mark.slow  # a job diagnosed with a user rule set: the full suite, not the fast loop
def test_a_user_rules_one_column_explains_still_explains_whole_findings(tmp_path):
    """The first form of [explains] (ranks alone), as user rules may have it: whole findings, as before."""
    rules = [
        replace(r, explains=replace(r.explains, sql=_ONE_COLUMN, categories=("communication",)))
        if r.name == "slow-rank"
        else r
        for r in load_rules(ROOT / "rules")
    ]
    assert validate_explains(rules[0], ["subject"], ["rank"]) == []
    root = write_job(job_plan("job_slow_rank", 4, 3, 2), tmp_path, kernels=3)
    slow = json.loads((root / "job_truth.json").read_text())["slow_rank"]
    trace = analyzer.load(root)
    try:
        job, *runs = analyzer.diagnose_all(trace, rule_set=rules)
    finally:
        trace.close()
    got = {_rank(d.run_id): (f.severity, f.explained_by and f.explained_by.text) for d in runs for f in d.findings}
    note = f"explained by JOB001: waiting for rank {slow}"
    assert got == {r: ("warning", None) if r == slow else ("info", note) for r in range(4)}
    waiting = next(d for d in runs if _rank(d.run_id) != slow)
    assert json.loads(render_json(waiting))["findings"][0]["explained_by"] == {
        "code": "JOB001",
        "rule": "slow-rank",
        "subject": f"rank {slow}",
        "note": f"waiting for rank {slow}",
        "severity": "warning",
        "text": note,
    }


def _explained_on_fixture(con, rule_name: str) -> tuple:
    """The job rule's finding on its fires/ case and the rows its [explains] query returns for it."""
    rule = RULES[rule_name]
    run_ids = load_fixture_tables(con, FIXTURES / rule_name / "fires")
    (f,), _ = run_rules(con, ConfiguredRules((rule,)), run_ids)
    values = {**rule.params, "run_id": run_ids[0], "subject": f.subject, "impact_us": f.impact_us}
    return f, con.execute(rule.explains.sql, bind_params(rule.explains.sql, values)).fetchall()


def test_slow_rank_explains_each_waiting_rank_its_wait_and_they_average_the_wait_it_causes(con):
    """JOB001's impact is the others' mean wait beyond the late rank's own: each waiting rank's explained_us
    is its own share of it, so they average to the finding's impact, and the late rank is not among them."""
    f, rows = _explained_on_fixture(con, "slow-rank")
    ranks = [r for r, _ in rows]
    assert f"rank {f.subject.split()[1]}" == f.subject and int(f.subject.split()[1]) not in ranks
    assert ranks == sorted(ranks) and len(ranks) >= 2 and all(us > 0 for _, us in rows)
    assert sum(us for _, us in rows) / len(rows) == pytest.approx(f.impact_us, rel=1e-6)


def test_pipeline_stage_imbalance_explains_the_other_stages_their_waits(con):
    f, rows = _explained_on_fixture(con, "pipeline-stage-imbalance")
    stage = {r: s for r, s in con.execute("SELECT rank, pp_stage FROM job_ranks").fetchall()}
    slow = int(f.subject.split()[1])
    assert {r for r, _ in rows} == {r for r, s in stage.items() if s != slow}
    waits = dict(
        con.execute(
            "SELECT rank, sum(wait_us) / (SELECT count(DISTINCT step_id) FROM job_comm_ops) FROM job_comm_ops "
            "GROUP BY rank"
        ).fetchall()
    )
    assert {r: round(us, 3) for r, us in rows} == {r: round(waits.get(r) or 0.0, 3) for r, _ in rows}


def test_a_rank_without_steps_takes_the_wait_over_the_jobs_steps_in_its_profiled_span():
    """A rank export without steps of its own: its amount is over its profiled span, the wait per job step
    times the job's steps, the note in the profiled span."""
    f = replace(finding(COM001, "rank0", 1, "profiled span"), impact_us=60_000.0, span_share=0.4, threshold=0.2)
    by = ExplainedBy("JOB001", "slow-rank", "rank 1", "waiting for rank 1", "")
    waits = {f.rule: ("exposed communication", "lower_is_better")}
    e = Explanation(by, ("communication",), ("rank0",), {"rank0": 10_000.0}, waits, 3)
    got = _explained(f, [e], (0, 150_000.0))  # no steps: its profiled span
    assert (got.severity, got.impact_us, got.span_share) == ("warning", 30_000.0, 0.2)  # left: 30 of 120 ms, 25%
    assert got.explained_by.text == (
        "partly explained by JOB001: 30.0 of its 60.0 ms in the profiled span of exposed communication is "
        "waiting for rank 1; 30.0 ms is its own"
    )


@pytest.mark.slow  # a generated job diagnosed whole
def test_a_user_rules_explains_returning_no_time_explains_nothing_and_breaks_nothing(tmp_path):
    """explained_us as text, or a second column of another name (a user's mistakes; `rules check` names both
    on the rule's fires/ case): no rank is explained, no traceback."""
    root = write_job(job_plan("job_slow_rank", 4, 3, 2), tmp_path, kernels=3)
    for bad in (
        "SELECT rank, 'a lot' AS explained_us FROM job_ranks WHERE run_id = $run_id ORDER BY rank",
        "SELECT rank, 1000.0 AS wait_us FROM job_ranks WHERE run_id = $run_id ORDER BY rank",  # not the contract
    ):
        rules = [
            replace(r, explains=replace(r.explains, sql=bad)) if r.name == "slow-rank" else r
            for r in load_rules(ROOT / "rules")
        ]
        trace = analyzer.load(root)
        try:
            job, *runs = analyzer.diagnose_all(trace, rule_set=rules)
        finally:
            trace.close()
        assert [f.code for f in job.findings] == ["JOB001"] and [e.run_ids for e in job.explains] == [()]
        found = {(f.code, f.severity, f.explained_by) for d in runs for f in d.findings}
        assert found == {("COM001", "warning", None)}, bad
