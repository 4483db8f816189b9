"""`rules check`: validate every rule file of a folder, and each message against its fires/ case."""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.duckdb_connect import close_to_files
from analyzer.errors import first_line
from analyzer.ingest.database import connect
from analyzer.rule_engine.fixture_tables import FixtureError, load_fixture_tables
from analyzer.rule_engine.loader import RuleFileError, load_rule, rule_files
from analyzer.rule_engine.model import Rule
from analyzer.rule_engine.runner import bind_params, outcome_run, rule_queries
from analyzer.rule_engine.scaling_views import create_run_scaling_views
from analyzer.rule_engine.validation import validate_explains, validate_message, validate_rules
from analyzer.rule_engine.views import create_views


def _fixture_problems(rule: Rule, fires: Path) -> list[str]:
    con = connect()
    try:
        run_ids = load_fixture_tables(con, fires) or ["fixture"]
        close_to_files(con)  # the rule's SQL runs in the sandbox of every run (rule_engine/runner.py)
        create_views(con, needs=rule_queries(rule))
        if rule.scope == "runs":
            create_run_scaling_views(con, run_ids)
        values = {**rule.params, "run_id": outcome_run(rule, run_ids), "run_ids": run_ids}
        cursor = con.execute(rule.sql, bind_params(rule.sql, values))
        columns = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
        explained = _explained_columns(con, rule, values, columns, rows)
    except (duckdb.Error, FixtureError) as exc:
        return [f"on {fires}: {first_line(exc)}"]
    finally:
        con.close()
    return validate_message(rule, columns) + validate_explains(rule, columns, *explained)


def _explained_columns(con, rule: Rule, values: dict, columns: list[str], rows: list) -> tuple[list[str], list[str]]:
    """The columns the rule's [explains] query returns for its first finding on the fixture, and their types
    (none without one)."""
    if not rule.explains.sql:
        return [], []
    first = dict(zip(columns, rows[0], strict=True)) if rows else {}
    sql = rule.explains.sql
    bound = {**values, "subject": first.get("subject", ""), "impact_us": first.get("impact_us", 0.0)}
    cursor = con.execute(sql, bind_params(sql, bound))
    cursor.fetchall()
    return [d[0] for d in cursor.description], [str(d[1]) for d in cursor.description]


def check_rules_folder(rules_dir: Path, fixtures_dir: Path | None = None) -> dict[str, list[str]]:
    """Rule file -> its problems (only files with problems).

    With ``fixtures_dir``, every rule must have ``<name>/fires`` and ``<name>/silent`` there, and
    its message placeholders are checked on fires/.
    """
    problems: dict[str, list[str]] = {}
    rules = []
    for path in rule_files(rules_dir):
        try:
            rules.append(load_rule(path))
        except RuleFileError as exc:
            problems[str(path)] = [exc.problem]
    for key, found in validate_rules(rules).items():
        problems.setdefault(key, []).extend(found)
    if fixtures_dir is None:
        return problems
    for rule in rules:
        found = [
            f"fixtures/rules/{rule.name}/{case}/ is missing"
            for case in ("fires", "silent")
            if not (fixtures_dir / rule.name / case).is_dir()
        ]
        if not found and not problems.get(rule.path):
            found = _fixture_problems(rule, fixtures_dir / rule.name / "fires")
        if found:
            problems.setdefault(rule.path, []).extend(found)
    return problems
