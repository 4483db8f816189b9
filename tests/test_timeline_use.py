"""Timeline kinds a diagnosis never reads are left out of its ingest, and the diagnosis is unchanged."""

from __future__ import annotations

import dataclasses
import json
import textwrap
from pathlib import Path

import duckdb
import pytest

from analyzer.cli import build_parser, diagnose_cmd, main
from analyzer.diagnosis import diagnose
from analyzer.ingest.loader import load_export
from analyzer.report.json_export import render_json
from analyzer.rule_engine.loader import default_rules_dir, load_rules
from analyzer.rule_engine.model import ConfiguredRules
from analyzer.rule_engine.timeline_use import UNREAD_KINDS, reads_timeline, unread_timeline_kinds
from fixtures.generator import write_export

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "fixtures" / "examples" / "resnet_host_sync"


@pytest.fixture(scope="module")
def rules():
    return load_rules(default_rules_dir())


def _kinds(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    return dict(con.execute("SELECT kind, count(*) FROM timeline GROUP BY kind").fetchall())


def test_built_in_rules_read_no_flow_or_overlap(rules):
    assert not any(reads_timeline(rule) for rule in rules)
    assert unread_timeline_kinds(rules) == UNREAD_KINDS == {"flow", "overlap"}


def test_a_rule_naming_the_timeline_keeps_every_kind(rules):
    in_sql = dataclasses.replace(rules[0], sql="SELECT run_id FROM Timeline WHERE kind = 'flow'")
    in_evidence = dataclasses.replace(rules[0], evidence_sql="SELECT name FROM timeline")
    required = dataclasses.replace(rules[0], requires={"timeline": ("flow_id",)})
    for rule in (in_sql, in_evidence, required):
        assert reads_timeline(rule)
        assert unread_timeline_kinds([*rules, rule]) == frozenset()
    # a table whose name merely contains the word is not the timeline
    assert not reads_timeline(dataclasses.replace(rules[0], sql="SELECT * FROM timeline_notes"))


def _ingest_both(path: Path):
    full = load_export(path)
    lean = load_export(path, left_out_kinds=UNREAD_KINDS)
    return full, lean


def _assert_left_out(path: Path, rules) -> None:
    """Flows and overlap segments are read by a full ingest, absent from one that leaves them out;
    every other row and the diagnosis are equal."""
    full, lean = _ingest_both(path)
    full_kinds, lean_kinds = _kinds(full.con), _kinds(lean.con)
    assert full_kinds.get("flow") and full_kinds.get("overlap"), full_kinds
    assert lean_kinds == {k: n for k, n in full_kinds.items() if k not in UNREAD_KINDS}
    rows = "SELECT * FROM timeline WHERE kind NOT IN ('flow', 'overlap') ORDER BY ALL"
    assert full.con.execute(rows).fetchall() == lean.con.execute(rows).fetchall()
    assert full.run_ids == lean.run_ids and full.problems == lean.problems
    configured = ConfiguredRules(tuple(rules))
    for run_id in full.run_ids:
        full_json, lean_json = (render_json(diagnose(t.con, run_id, configured)) for t in (full, lean))
        assert full_json == lean_json


@pytest.mark.slow
def test_left_out_kinds_of_a_torch_npu_text_export(rules):
    _assert_left_out(EXAMPLE, rules)


def test_left_out_kinds_of_a_real_torch_npu_db_export(real_dir, rules):
    """The SQLite readers: OVERLAP_ANALYSIS and connectionCats are not read."""
    _assert_left_out(real_dir / "torch_npu_level1_rank0_db", rules)


@pytest.mark.slow
def test_msprof_json_slices_leave_out_flows_and_overlap(tmp_path):
    root = write_export("comm_not_overlapped", tmp_path, layout="msprof", slice_rows=50)[0]
    assert len(list(root.rglob("msprof_*.json"))) > 1
    full, lean = _ingest_both(root)
    assert _kinds(full.con).get("flow")
    assert not set(_kinds(lean.con)) & UNREAD_KINDS
    assert _kinds(lean.con)["device_task"] == _kinds(full.con)["device_task"]


def _diagnose_connection(argv: list[str], rules) -> duckdb.DuckDBPyConnection:
    """The connection `npu-triage diagnose` ingests into, for these arguments."""
    args = build_parser(["diagnose"]).parse_args(["diagnose", *argv])
    return diagnose_cmd._load(args, rules).con


def test_diagnose_leaves_out_what_its_rules_do_not_read(tmp_path, rules):
    """The command itself passes the unread kinds to ingest (not only load_export when asked)."""
    kinds = _kinds(_diagnose_connection([str(EXAMPLE), "--out", str(tmp_path)], rules))
    assert kinds.get("device_task") and not set(kinds) & UNREAD_KINDS


@pytest.mark.slow
def test_diagnose_with_db_keeps_every_kind(tmp_path):
    db = tmp_path / "runs.duckdb"
    assert main(["diagnose", str(EXAMPLE), "--db", str(db), "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert _kinds(con).get("flow") and _kinds(con).get("overlap")
    finally:
        con.close()


@pytest.mark.slow
def test_a_user_rule_reading_flows_sees_them(tmp_path):
    """A rules folder whose rule counts flow rows: diagnose stores them, and the rule fires."""
    folder = tmp_path / "rules" / "host"
    folder.mkdir(parents=True)
    (folder / "flow-count.toml").write_text(
        textwrap.dedent('''\
        schema_version = 1
        [rule]
        id = "HST900"
        name = "flow-count"
        title = "Flow arrows in the timeline"
        category = "host"
        severity = "info"
        status = "stable"
        since = "0.1.0"
        scope = "run"
        requires = { ops = ["dur_us"] }
        [doc]
        checks = "Counts flow events."
        why = "A test rule."
        impact = "None: impact 0."
        [query]
        sql = """
        SELECT run_id, 'flows' AS subject, count(*) AS value, 0.0 AS impact_us
        FROM timeline WHERE run_id = $run_id AND kind = 'flow' GROUP BY run_id HAVING count(*) > 0
        ORDER BY impact_us DESC, subject
        """
        [finding]
        metric = "flow_count"
        unit = "count"
        polarity = "lower_is_better"
        message = "{value} flow events"
        [advice]
        summary = "Nothing to do."
        steps = ["Nothing."]
        ''')
    )
    out = tmp_path / "out"
    assert (
        main(["diagnose", str(EXAMPLE), "--rules", str(tmp_path / "rules"), "--out", str(out), "--format", "json"]) == 0
    )
    report = json.loads(next(out.rglob("diagnosis.json")).read_text())
    assert [f["rule"] for f in report["findings"]] == ["flow-count"]
