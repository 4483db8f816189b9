"""Every view, table and macro of the .sql modules (helpers, scaling) documents itself and each column it returns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analyzer.ingest.database import connect
from analyzer.ingest.loader import load_export
from analyzer.metrics.sweep import scaling_definitions
from analyzer.rule_engine.chip_table import NOMINAL_KEYS
from analyzer.rule_engine.scaling_views import create_run_scaling_views
from analyzer.rule_engine.views import COMPUTE_TASK_TYPES, create_views, helper_definitions
from analyzer.sql_modules import SqlModuleError, parse_module

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "examples"
EXAMPLE = EXAMPLES / "resnet_host_sync"

# An input for each macro with the columns it reads (and no rows): what it returns is then described.
_MACRO_INPUT = (
    "SELECT {'run_id': 'r'} AS key, 'r' AS run_id, 0::INTEGER AS device_id, 1::BIGINT AS rid, "
    "1::BIGINT AS start_ns, 2::BIGINT AS end_ns, 1::INTEGER AS rank, 1::BIGINT AS step_id, 'g' AS group_name, "
    "'o' AS op_name, 1.0::DOUBLE AS us LIMIT 0"
)


@pytest.fixture(scope="module")
def example_con():
    ingested = load_export(EXAMPLE)
    create_views(ingested.con)
    yield ingested.con
    ingested.con.close()


def _columns(con, relation_sql: str) -> list[str]:
    return [row[0] for row in con.execute(f"DESCRIBE {relation_sql}").fetchall()]


def _documented(con, definition) -> list[str]:
    """The documented columns, each ``X.*`` spelled out as the columns of X."""
    names: list[str] = []
    for column, doc in definition.columns:
        assert doc.strip(), f"{definition.name}.{column}: empty doc"
        names += _columns(con, column.removesuffix(".*")) if column.endswith(".*") else [column]
    return names


@pytest.mark.parametrize("definition", helper_definitions(), ids=lambda d: d.name)
def test_helper_definition_every_returned_column_is_documented(example_con, definition) -> None:
    assert len(definition.description.split()) >= 5, f"{definition.name}: describe what it holds"
    if definition.kind == "macro":
        returned = _columns(example_con, f"WITH src AS ({_MACRO_INPUT}) SELECT * FROM {definition.name}(src)")
    else:
        returned = _columns(example_con, definition.name)
    assert _documented(example_con, definition) == returned


@pytest.fixture(scope="module")
def empty_con():
    con = connect()
    create_views(con)
    yield con
    con.close()


def _described(con, definition) -> list[tuple[str, str]]:
    """(name, type) of each column DESCRIBE gives, a STRUCT (a macro's key, shaped by its input) as STRUCT."""
    relation = definition.name
    if definition.kind == "macro":
        relation = f"WITH src AS ({_MACRO_INPUT}) SELECT * FROM {definition.name}(src)"
    rows = con.execute(f"DESCRIBE {relation}").fetchall()
    return [(name, "STRUCT" if type_.startswith("STRUCT(") else type_) for name, type_, *_ in rows]


@pytest.mark.parametrize("definition", helper_definitions(), ids=lambda d: d.name)
def test_helper_definition_column_types_match_describe(empty_con, definition) -> None:
    """Every @column line (public and @internal helpers) gives the name and DuckDB type DESCRIBE reports."""
    described = _described(empty_con, definition)
    documented: list[tuple[str, str]] = []
    for (column, _doc), type_ in zip(definition.columns, definition.types, strict=True):
        if column.endswith(".*"):
            documented += [c for c in described if c[0] in _columns(empty_con, column.removesuffix(".*"))]
        else:
            documented.append((column, type_))
    assert documented == described


def test_helper_definitions_public_and_internal_are_marked() -> None:
    internal = {d.name for d in helper_definitions() if d.internal}
    assert "_time_parts" in internal and "_intervals_merged" in internal
    assert "_time_breakdown" not in internal and "_compute_tasks" not in internal


@pytest.mark.slow
def test_scaling_views_every_returned_column_is_documented() -> None:
    ingested = load_export(EXAMPLES / "batch_sweep")
    try:
        create_run_scaling_views(ingested.con, list(ingested.run_ids))
        for definition in scaling_definitions():
            assert _documented(ingested.con, definition) == _columns(ingested.con, definition.name), definition.name
            described = _described(ingested.con, definition)
            assert list(zip((c for c, _doc in definition.columns), definition.types, strict=True)) == described
    finally:
        ingested.con.close()


def test_helper_run_nominal_has_every_chip_table_key(example_con) -> None:
    assert _columns(example_con, "_run_nominal") == ["run_id", "chip", "chip_assumed", *NOMINAL_KEYS]


def test_helper_compute_tasks_names_the_compute_task_types() -> None:
    sql = next(d.sql for d in helper_definitions() if d.name == "_compute_tasks")
    assert tuple(re.findall(r"'(\w+)'", sql)) == COMPUTE_TASK_TYPES


def test_helper_kinds_keep_the_plain_views_plain() -> None:
    views = sorted(d.name for d in helper_definitions() if d.kind == "view")
    assert views == ["_comm_tasks", "_compute_tasks", "_steps_decomposed", "_stream_gaps", "_tasks"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("-- @view _x\n-- Holds one row.\nSELECT 1 AS n;\n", "no @column lines"),
        ("-- @view _x\n-- @column n INTEGER  a number\nSELECT 1 AS n;\n", "no description"),
        ("-- @view _x\n-- Holds one row.\n-- @colum n INTEGER  a number\nSELECT 1 AS n;\n", "unknown tag @colum"),
        ("-- @macro _m\n-- Holds one row.\n-- @column n INTEGER  a number\nSELECT 1 AS n;\n", "takes (arguments)"),
        ("-- @view _x\n-- Holds one row.\n-- @column n INTEGER  one\nSELECT 1;\n-- @tabel _y\n", "not a definition"),
        ("-- @view _x\n-- Holds one row.\n-- @column n  a number\nSELECT 1 AS n;\n", "gives no type"),
        ("-- @view _x\n-- Holds one row.\n-- @internal\n-- @column n INTEGER  a number\nSELECT 1;\n", "@internal"),
        ("-- @view _x\n-- @empty_without ops\n-- Holds one row.\n-- @column n INTEGER  one\nSELECT 1;\n", "@empty_"),
    ],
)
def test_helper_module_undocumented_definition_is_refused(text: str, problem: str) -> None:
    with pytest.raises(SqlModuleError, match=re.escape(problem)) as raised:
        parse_module(text, "demo", typed=True)
    assert "demo.sql line 1 (_x" in str(raised.value) or "(_m)" in str(raised.value)
