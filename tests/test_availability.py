"""The rules' prechecks: which columns hold data for which runs, answered in one query."""

from __future__ import annotations

from dataclasses import replace

from analyzer.ingest.database import append_rows
from analyzer.rule_engine.availability import Availability, required_keys
from analyzer.rule_engine.loader import default_rules_dir, load_rules


def _rule(requires: dict[str, tuple[str, ...]]):
    return replace(load_rules(default_rules_dir())[0], requires=requires)


def test_availability_per_run_column_and_counter(con):
    append_rows(con, "ops", "SELECT * FROM (VALUES ('a', 'k', 'MatMul'), ('b', 'k', NULL)) v(run_id, op_name, op_type)")
    con.execute("INSERT INTO counters (run_id, counter, value) VALUES ('b', 'hbm_read', 2.0)")
    rule = _rule({"ops": ("op_name", "op_type"), "counters:hbm_read": ("value",), "counters:hbm_write": ("value",)})
    availability = Availability(con)
    availability.prefetch(key for run in ("a", "b") for key in required_keys(rule, (run,)))
    hbm_read, hbm_write = "counters:hbm_read.value", "counters:hbm_write.value"
    assert availability.missing(rule, ("a",)) == [hbm_read, hbm_write]
    assert availability.missing(rule, ("b",)) == ["ops.op_type", hbm_write]
    assert availability.missing(rule, ("a", "b")) == [hbm_write]  # not prefetched: asked alone


def test_prefetch_asks_once_per_key(con):
    availability = Availability(con)
    rule = _rule({"ops": ("start_ns",)})
    availability.prefetch(required_keys(rule, ("a",)))
    append_rows(con, "ops", "SELECT 'a' AS run_id, 'k' AS op_name, 5 AS start_ns")
    availability.prefetch(required_keys(rule, ("a",)))  # cached: the first answer stays
    assert availability.missing(rule, ("a",)) == ["ops.start_ns"]


def test_plan_does_not_ask_about_rules_skipped_whatever_the_data(con):
    from analyzer.rule_engine.model import ConfiguredRules
    from analyzer.rule_engine.runner import _plan

    preview = replace(_rule({"ops": ("op_name",)}), status="preview")
    several = replace(_rule({"ops": ("op_type",)}), scope="runs")
    availability = Availability(con)
    planned = _plan(ConfiguredRules((preview, several)), ["a"], availability)
    assert [p.skipped.reason.split(";")[0] for p in planned] == [
        "preview rule",
        "compares several runs: judged once over all the runs of PATH",
    ]
    assert availability._seen == {}  # neither rule's columns were looked up
