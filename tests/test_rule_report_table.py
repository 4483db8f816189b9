"""The [report] table of a rule file: loaded into Rule.report and checked against the charts reports draw."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.rule_engine.loader import load_rules, rule_from_document
from analyzer.rule_engine.model import ReportSpec
from analyzer.rule_engine.validation import validate_rule
from analyzer.vocabulary import PROFILE_SCOPES

ROOT = Path(__file__).resolve().parents[1]
BUILTIN = load_rules(ROOT / "rules")


def test_rule_report_table_builtin_rules_each_declare_a_chart():
    """Every rule judged on a run's page declares its chart; job rules are drawn on the job page, the
    rules of dumps and logs on their commands' pages."""
    on_run_pages = [r for r in BUILTIN if r.scope in PROFILE_SCOPES]
    assert all(r.report.chart for r in on_run_pages), [r.name for r in on_run_pages if not r.report.chart]


def test_rule_report_table_loads_its_keys():
    spec = rule_from_document({"report": {"chart": "busy", "zoom": "step", "limit_param": "t", "oops": 1}}).report
    assert spec == ReportSpec(chart="busy", zoom="step", limit_param="t", unknown=("oops",))


def test_rule_report_table_bad_values_are_named():
    rule = BUILTIN[0]
    bad = replace(rule, report=ReportSpec(chart="pie", zoom="month", limit_param="nope", unknown=("colour",)))
    problems = " | ".join(validate_rule(bad))
    assert "[report] chart 'pie' is not one of" in problems
    assert "[report] zoom 'month'" in problems
    assert "[report] limit_param 'nope' is not a declared param" in problems
    assert "[report] colour is not a known key" in problems


def test_rule_report_table_without_chart_is_valid_and_marks_need_one():
    rule = BUILTIN[0]
    assert validate_rule(replace(rule, report=ReportSpec())) == []
    assert validate_rule(replace(rule, report=ReportSpec(marks="subjects"))) == [
        "[report] zoom, limit_param and marks need a chart"
    ]
