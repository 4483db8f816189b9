"""Job findings share the job's wait: a late rank and its group's wait are one cost, told once."""

from __future__ import annotations

from analyzer.rule_engine.fixture_tables import load_fixture_tables
from analyzer.rule_engine.impact_sharing import exclusive_job_impacts
from analyzer.rule_engine.model import ConfiguredRules
from analyzer.rule_engine.runner import run_rules
from tests.rule_cases import FIXTURES_DIR, RULES

_JOB_RULES = [r for r in RULES.values() if r.scope == "job"]


def _job_step_and_max_wait(con, job: str) -> tuple[float, float]:
    step = con.execute(
        "SELECT avg(s) FROM (SELECT max(stage_us) AS s FROM job_steps WHERE run_id = ? GROUP BY step_id)", [job]
    ).fetchall()[0][0]
    wait = con.execute(
        "SELECT max(w) FROM (SELECT sum(wait_us) / count(DISTINCT step_id) AS w FROM job_comm_ops "
        "WHERE run_id = ? AND op_kind = 'collective' GROUP BY rank)",
        [job],
    ).fetchall()[0][0]
    return step, wait


def test_job_late_rank_and_group_wait_claim_the_same_wait_once(con):
    # One rank late at every collective of a three-rank group: slow-rank names it, and the group's
    # wait far above its transit is the same wait seen from the group.
    (job,) = load_fixture_tables(con, FIXTURES_DIR / "collective-wait-dominates" / "fires")
    raw, _ = run_rules(con, ConfiguredRules(tuple(_JOB_RULES)), [job])
    assert sorted(f.rule for f in raw) == ["collective-wait-dominates", "slow-rank"]
    step, wait = _job_step_and_max_wait(con, job)
    assert sum(f.impact_us for f in raw) > wait  # alone, each claims the wait again

    findings = {f.rule: f for f in exclusive_job_impacts(con, raw, _JOB_RULES)}
    late, group = findings["slow-rank"], findings["collective-wait-dominates"]
    assert late.severity == "warning" and late.impact_us == next(f for f in raw if f.rule == "slow-rank").impact_us
    # severity is the rule's condition (issue 45: the same data gives the same severity in every layout);
    # the wait is counted once: the group keeps only what the late rank leaves of it
    assert group.severity == "warning" and "severity_before_overlap" not in group.details
    group_raw = next(f for f in raw if f.rule == "collective-wait-dominates").impact_us
    assert group.impact_us < 0.01 * step  # what the late rank leaves of the wait: immaterial
    assert abs(group.details["claimed_by_other_findings_us"] - (group_raw - group.impact_us)) < 1e-6
    assert late.impact_us + group.impact_us <= wait + 1e-6
    assert sum(f.impact_us for f in findings.values()) <= step


def test_job_findings_together_never_exceed_the_job_step(con):
    # Every job rule's fires/ case in one connection; within each job the impacts add up to at most its step.
    jobs = []
    for rule in sorted(_JOB_RULES, key=lambda r: r.name):
        run_ids = load_fixture_tables(con, FIXTURES_DIR / rule.name / "fires")
        jobs += run_ids
    raw, _ = run_rules(con, ConfiguredRules(tuple(_JOB_RULES)), sorted(set(jobs)))
    findings = exclusive_job_impacts(con, raw, _JOB_RULES)
    assert len(findings) == len(raw)
    for job in sorted({f.run_id for f in findings}):
        step, _ = _job_step_and_max_wait(con, job)
        assert sum(f.impact_us for f in findings if f.run_id == job) <= step + 1e-6
