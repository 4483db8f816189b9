"""run_rules: skipped when data is missing, failed (no crash) on a SQL error, overrides bound."""

from __future__ import annotations

import dataclasses
import tracemalloc

import pytest

from analyzer.ingest.database import append_rows
from analyzer.rule_engine.fixture_tables import load_fixture_tables
from analyzer.rule_engine.model import ConfiguredRules
from analyzer.rule_engine.params import ParamError, check_overrides, parse_set_options
from analyzer.rule_engine.runner import run_rules
from tests.rule_cases import FIXTURES_DIR, RULES


def test_runner_missing_pmu_columns_is_skipped_with_hint(con):
    append_rows(
        con,
        "ops",
        "SELECT 'r' AS run_id, 'Add' AS op_type, 'AI_CORE' AS task_type, 0 AS start_ns, 1000 AS end_ns, 1.0 AS dur_us",
    )
    findings, outcomes = run_rules(con, ConfiguredRules((RULES["mte-share-high"],)), ["r"])
    assert findings == []
    assert outcomes[0].status == "skipped"
    assert "ops.core_time_us" in outcomes[0].reason and "PipeUtilization" in outcomes[0].enable_hint


def test_runner_sql_error_is_failed_outcome(con):
    broken = dataclasses.replace(RULES["inter-op-gap"], sql="SELECT no_such_column FROM ops ORDER BY 1, 2")
    append_rows(con, "ops", "SELECT 'r' AS run_id, 0 AS start_ns, 1000 AS end_ns")
    findings, outcomes = run_rules(con, ConfiguredRules((broken,)), ["r"])
    assert findings == [] and outcomes[0].status == "failed" and "no_such_column" in outcomes[0].reason


def test_runner_threshold_override_silences_fires_case(con):
    run_ids = load_fixture_tables(con, FIXTURES_DIR / "mte-share-high" / "fires")
    overrides = check_overrides(parse_set_options(["mte-share-high.threshold=0.6"]), list(RULES.values()))
    findings, _ = run_rules(con, ConfiguredRules((RULES["mte-share-high"],), overrides), run_ids)
    assert findings == []


@pytest.mark.slow
def test_evidence_keeps_its_top_rows_in_order_and_counts_the_rest_in_duckdb(con):
    """A finding keeps evidence_limit rows in the evidence query's order and the total count; the
    rows beyond the limit never become Python objects (3M of them took about 300 MB of Python memory
    when they were all fetched to be counted)."""
    run_ids = load_fixture_tables(con, FIXTURES_DIR / "inter-op-gap" / "fires")
    rule = dataclasses.replace(
        RULES["inter-op-gap"], evidence_sql="SELECT range AS i FROM range(3000000) ORDER BY i DESC;"
    )
    tracemalloc.start()
    try:
        findings, _ = run_rules(con, ConfiguredRules((rule,)), run_ids, evidence_limit=10)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert findings and all(f.evidence == tuple((i,) for i in range(2999999, 2999989, -1)) for f in findings)
    assert all(f.details["evidence_total_rows"] == 3000000 for f in findings)
    assert peak < 30 << 20


def test_runner_runs_scope_with_one_run_is_skipped(con):
    several = dataclasses.replace(RULES["inter-op-gap"], scope="runs")
    _, outcomes = run_rules(con, ConfiguredRules((several,)), ["r"])
    assert outcomes[0].status == "skipped" and "several runs" in outcomes[0].reason


def test_params_wrong_type_is_an_error():
    with pytest.raises(ParamError, match="expected a value like"):
        check_overrides(parse_set_options(["mte-share-high.threshold=high"]), list(RULES.values()))
