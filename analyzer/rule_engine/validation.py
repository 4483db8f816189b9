"""Checks on loaded rules: ids, names, enums, params, required tables/columns, placeholders."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from analyzer.ingest.finalize import SETTINGS
from analyzer.ingest.schema import has_column, tables_for_scope
from analyzer.rule_engine.chip_table import CHIP_KEY, NOMINAL_KEYS
from analyzer.rule_engine.model import Rule
from analyzer.rule_engine.views import helper_definitions
from analyzer.vocabulary import (
    CATEGORIES,
    IMPACT_FAMILIES,
    IMPACT_ROLES,
    POLARITIES,
    SCOPES,
    SEVERITIES,
    STATUSES,
    UNITS,
)

SCHEMA_VERSION = 1
CATEGORY_PREFIX: dict[str, str] = {  # keys: vocabulary.CATEGORIES (tests/test_vocabulary.py)
    "compute": "CMP",
    "memory": "MEM",
    "communication": "COM",
    "scheduling": "SCH",
    "host": "HST",
    "job": "JOB",  # rules of scope 'job': one distributed job, several ranks (analyzer/job/)
    "accuracy": "ACC",  # rules of scope 'dump': a dump set against its reference (analyzer/accuracy/)
    "logs": "LOG",  # rules of scope 'logs': one collection of CANN logs (analyzer/logs/)
}
# Scopes whose rules live in a category of their own, and only there; the other scopes judge profiles.
SCOPE_CATEGORY: dict[str, str] = {"job": "job", "dump": "accuracy", "logs": "logs"}
# The charts a rule may declare beside its findings ([report] chart): analyzer/report/html.py draws
# them (CHARTS for one run, RUNS_CHARTS for several; tests/test_report_html.py checks both lists agree).
CHART_KINDS = (
    "busy",
    "pareto",
    "pipeline",
    "gap_histogram",
    "gap_positions",
    "calls",
    "steps",
    "hbm",
    "memory",
    "timeline",
    "scaling",
    # the job page's charts (analyzer/report/job_page.py), for rules of scope 'job'
    "job_rank_step",
    "job_wait_transit",
    "job_links",
    "job_stages",
)
CHART_ZOOMS = ("step",)
CHART_MARKS = ("subjects",)
# Bound by the runner, never declared: the run or job (scope 'run', 'job'), the runs ('runs'), the subject.
RESERVED_PARAMS = ("run_id", "run_ids", "subject")
# Bound in a job rule's [explains] query besides those: the job finding's impact (per job step).
EXPLAINS_PARAMS = ("impact_us",)
# What a job rule's [explains] query returns: the explained ranks and the time per job step the cause costs
# each; or the ranks alone (explaining whole findings, the first form of the table).
EXPLAINS_COLUMNS = (["rank", "explained_us"], ["rank"])
_NUMBER_TYPE = re.compile(r"^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|DOUBLE|FLOAT|REAL|DECIMAL)\b")
# Columns every rule query returns; a message may also use them.
FINDING_COLUMNS = ("run_id", "subject", "value", "impact_us")
FINDING_FIELDS = FINDING_COLUMNS + ("threshold", "span_share", "title", "rule", "code")
_REQUIRED_TEXT = (
    "id",
    "name",
    "title",
    "category",
    "severity",
    "status",
    "since",
    "sql",
    "metric",
    "unit",
    "polarity",
    "message",
    "advice_summary",
    "doc_checks",
    "doc_why",
    "doc_impact",
)
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_ORDER_BY_LAST = re.compile(r"\bORDER\s+BY\b(?![\s\S]*\b(FROM|SELECT)\b)([\s\S]*)$", re.IGNORECASE)


def sql_params(sql: str) -> set[str]:
    """Names of the ``$param`` references in a SQL text.

    >>> sorted(sql_params("SELECT 1 WHERE a > $threshold AND run_id = $run_id"))
    ['run_id', 'threshold']
    """
    return set(_PARAM.findall(sql))


def message_fields(message: str) -> set[str]:
    """Root names of the ``{placeholders}`` of a message template.

    >>> sorted(message_fields("{subject}: {value:.0%} over {launches} (limit {threshold:.0%})"))
    ['launches', 'subject', 'threshold', 'value']
    """
    return {re.split(r"[.\[]", f)[0] for _, f, _, _ in string.Formatter().parse(message) if f}


def _field_problems(rule: Rule) -> list[str]:
    problems = [f"[{f}] is missing or empty" for f in _REQUIRED_TEXT if not getattr(rule, f)]
    if rule.schema_version != SCHEMA_VERSION:
        problems.append(f"schema_version must be {SCHEMA_VERSION}")
    enums = (
        ("category", CATEGORIES),
        ("severity", SEVERITIES),
        ("status", STATUSES),
        ("scope", SCOPES),
        ("polarity", POLARITIES),
        ("unit", UNITS),
        ("impact_family", IMPACT_FAMILIES),
        ("impact_role", IMPACT_ROLES),
    )
    for name, allowed in enums:
        value = getattr(rule, name)
        if value and value not in allowed:
            problems.append(f"{name} {value!r} is not one of {', '.join(allowed)}")
    prefix = CATEGORY_PREFIX.get(rule.category, "")
    if rule.id and prefix and not re.fullmatch(prefix + r"\d{3}", rule.id):
        problems.append(f"id {rule.id!r} must be {prefix} and three digits for category {rule.category}")
    if rule.name and not _KEBAB.match(rule.name):
        problems.append(f"name {rule.name!r} is not kebab-case")
    own = SCOPE_CATEGORY.get(rule.scope)
    if rule.scope and rule.category and own != rule.category and rule.category in SCOPE_CATEGORY.values():
        problems.append(f"category {rule.category!r} holds only rules of its own scope, not {rule.scope!r}")
    elif rule.scope and rule.category and own and own != rule.category:
        problems.append(f"a rule of scope {rule.scope!r} lives in category {own!r} (rules/{own}/)")
    if rule.collect and rule.collect not in SETTINGS:
        problems.append(f"collect {rule.collect!r} is not one of {', '.join(SETTINGS)}")
    if not rule.advice_steps:
        problems.append("[advice] steps is empty")
    return problems


def _location_problems(rule: Rule) -> list[str]:
    if not rule.path:
        return []
    path = Path(rule.path)
    problems = []
    if rule.name and path.stem != rule.name:
        problems.append(f"file stem {path.stem!r} differs from name {rule.name!r}")
    if rule.category and path.parent.name != rule.category:
        problems.append(f"folder {path.parent.name!r} differs from category {rule.category!r}")
    return problems


def _query_problems(rule: Rule) -> list[str]:
    problems = []
    query, evidence, explains = sql_params(rule.sql), sql_params(rule.evidence_sql), sql_params(rule.explains.sql)
    used = query | evidence | explains
    explains_only = explains - query - evidence
    for p in sorted(used - set(rule.params) - set(RESERVED_PARAMS) - (set(EXPLAINS_PARAMS) & explains_only)):
        problems.append(f"${p} is used in the SQL but not declared in [params]")
    for p in sorted(set(rule.params) - used):
        problems.append(f"param {p!r} is declared but never used in the SQL")
    for p in sorted(set(rule.params) & {*RESERVED_PARAMS, *EXPLAINS_PARAMS}):
        problems.append(f"param {p!r} is reserved (the runner binds it)")
    if rule.sql and not _order_by_has_tie_breaker(rule.sql):
        problems.append("[query] sql must end with an ORDER BY of at least two keys (a tie-breaker)")
    if rule.threshold_param and rule.threshold_param not in rule.params:
        problems.append(f"[finding] threshold_param {rule.threshold_param!r} is not a declared param")
    return problems


@cache
def _internal_helper_names() -> re.Pattern[str]:
    """Any @internal helper's name as a word: one search of a rule's SQL for all of them (each rule is validated
    on every load of the rules, a small run's diagnosis among them)."""
    return re.compile(r"\b(" + "|".join(d.name for d in helper_definitions() if d.internal) + r")\b")


def _helper_problems(rule: Rule) -> list[str]:
    """A rule reads public helpers only: an @internal one is a step that may change with its module."""
    sql = re.sub(r"--[^\n]*", "", "\n".join((rule.sql, rule.evidence_sql, rule.explains.sql)))
    read = set(_internal_helper_names().findall(sql))
    return [
        f"reads the internal helper {d.name} (a step of {d.module}.sql, marked @internal): read a public helper"
        " (docs/rules.md) or the tables instead"
        for d in helper_definitions()
        if d.internal and d.name in read
    ]


def _report_problems(rule: Rule) -> list[str]:
    spec = rule.report
    problems = [f"[report] {k} is not a known key (chart, zoom, limit_param, marks)" for k in spec.unknown]
    for name, value, allowed in (
        ("chart", spec.chart, CHART_KINDS),
        ("zoom", spec.zoom, CHART_ZOOMS),
        ("marks", spec.marks, CHART_MARKS),
    ):
        if value and value not in allowed:
            problems.append(f"[report] {name} {value!r} is not one of {', '.join(allowed)}")
    owner, _, key = spec.limit_param.rpartition(".")
    known = key in NOMINAL_KEYS if owner == CHIP_KEY else spec.limit_param in rule.params
    if spec.limit_param and not known:
        problems.append(f"[report] limit_param {spec.limit_param!r} is not a declared param or chip.<nominal value>")
    if not spec.chart and (spec.zoom or spec.limit_param or spec.marks):
        problems.append("[report] zoom, limit_param and marks need a chart")
    return problems


def _explains_problems(rule: Rule) -> list[str]:
    """[explains]: only a job rule explains rank-level findings, of profile categories, by a note and a query."""
    spec = rule.explains
    problems = [f"[explains] {k} is not a known key (categories, note, sql)" for k in spec.unknown]
    if not (spec.categories or spec.note or spec.sql):
        return problems
    if rule.scope != "job":
        return [*problems, "[explains] is for rules of scope 'job' (a job finding explains its ranks' findings)"]
    rank_level = [c for c in CATEGORIES if c not in SCOPE_CATEGORY.values()]
    problems += [
        f"[explains] category {c!r} is not one of {', '.join(rank_level)}"
        for c in spec.categories
        if c not in rank_level
    ]
    problems += [f"[explains] {k} is missing or empty" for k in ("categories", "note", "sql") if not getattr(spec, k)]
    if (
        spec.sql
        and not _order_by_has_tie_breaker(spec.sql)
        and not re.search(r"\bORDER\s+BY\s+rank\s*$", spec.sql.strip(), re.I)
    ):
        problems.append("[explains] sql must end with ORDER BY rank (one row per explained rank)")
    return problems


def _waits_problems(rule: Rule) -> list[str]:
    """[impact] waits: a rank-level rule whose value is its amount's share of the span (or the rest's), so that
    the part a job finding explains can be taken off both (analyzer/job/explained.py)."""
    if not rule.impact_waits:
        return []
    if rule.scope != "run":
        return ["[impact] waits is for rules of scope 'run' (a job finding explains part of a rank's finding)"]
    if rule.unit != "ratio" or not rule.threshold_param:
        return ["[impact] waits needs a ratio finding with a threshold_param (its value is a share of the span)"]
    return []


def _order_by_has_tie_breaker(sql: str) -> bool:
    match = _ORDER_BY_LAST.search(sql.strip().rstrip(";"))
    return match is not None and "," in match.group(2) and ")" not in match.group(2)


def _requires_problems(rule: Rule) -> list[str]:
    problems = []
    for key, columns in rule.requires.items():
        table = key.split(":", 1)[0]  # 'counters:hbm_read' = the counters rows of that counter
        if table not in tables_for_scope(rule.scope):
            problems.append(f"requires table {table!r}, which is not in the schema")
            continue
        problems += [
            f"requires {table}.{c}, which is not in the schema" for c in columns if not has_column(table, c, rule.scope)
        ]
    if rule.scope == "job":
        problems += [f"a job rule reads job tables only, not {t!r}" for t in rule.requires if not t.startswith("job_")]
    if not rule.requires:
        problems.append("[rule] requires is empty (name the tables and columns the query reads)")
    return problems


def validate_rule(rule: Rule) -> list[str]:
    """Problems of one rule on its own (empty when it is valid)."""
    return (
        _field_problems(rule)
        + _location_problems(rule)
        + _query_problems(rule)
        + _helper_problems(rule)
        + _requires_problems(rule)
        + _report_problems(rule)
        + _explains_problems(rule)
        + _waits_problems(rule)
    )


def _placeholder_problems(what: str, template: str, rule: Rule, returned_columns: list[str]) -> list[str]:
    """Placeholders of ``template`` (the rule's message or note) that are neither a returned column, a
    finding field nor a param."""
    known = set(returned_columns) | set(FINDING_FIELDS) | set(rule.params)
    return [
        f"{what} placeholder {{{f}}} is not a returned column or a param"
        for f in sorted(message_fields(template) - known)
    ]


def validate_message(rule: Rule, returned_columns: list[str]) -> list[str]:
    """Message placeholders that are neither a returned column, a finding field nor a param."""
    problems = _placeholder_problems("message", rule.message, rule, returned_columns)
    problems += [f"the query does not return column {c!r}" for c in FINDING_COLUMNS if c not in returned_columns]
    return problems


def validate_explains(
    rule: Rule, returned_columns: list[str], explained_columns: list[str], explained_types: Sequence[str] = ()
) -> list[str]:
    """[explains]: its note's placeholders are the job finding's columns, its query returns ``rank`` and
    ``explained_us``, a number (or ``rank`` alone: whole findings); ``explained_types``: the DuckDB types of
    the columns, when known."""
    if not rule.explains.sql:
        return []
    problems = _placeholder_problems("[explains] note", rule.explains.note, rule, returned_columns)
    if explained_columns not in EXPLAINS_COLUMNS:
        problems.append(
            "[explains] sql must return the columns rank, explained_us (the time per job step the cause costs "
            f"the rank), or rank alone, not {', '.join(explained_columns)}"
        )
    types = dict(zip(explained_columns, explained_types, strict=False))
    if "explained_us" in types and not _NUMBER_TYPE.match(types["explained_us"]):
        problems.append(f"[explains] explained_us must be a number (microseconds), not {types['explained_us']}")
    return problems


def validate_rules(rules: list[Rule]) -> dict[str, list[str]]:
    """Rule path (or name) -> its problems, including duplicate ids and names across rules."""
    result = {r.path or r.name: validate_rule(r) for r in rules}
    for attr in ("id", "name"):
        counts = Counter(getattr(r, attr) for r in rules)
        for r in rules:
            if getattr(r, attr) and counts[getattr(r, attr)] > 1:
                result[r.path or r.name].append(f"{attr} {getattr(r, attr)!r} is used by another rule too")
    return {k: v for k, v in result.items() if v}
