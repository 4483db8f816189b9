"""Helper tables of empty inputs made without their queries: the same columns, types and rows as computed."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.ingest import load_export
from analyzer.ingest.database import connect
from analyzer.rule_engine.views import create_views, empty_tables, helper_definitions
from analyzer.rule_engine.views.empty_tables import empty_sources, known_empty, source_tables

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "examples" / "resnet_host_sync"

_COLUMNS_SQL = """
SELECT table_name, column_name, data_type FROM duckdb_columns()
WHERE database_name = 'temp' AND table_name LIKE '\\_%' ESCAPE '\\' ORDER BY table_name, column_index
"""


@pytest.fixture
def unlearnt(monkeypatch):
    """This process's known columns forgotten: the next create_views on empty inputs runs every query."""
    monkeypatch.setattr(empty_tables, "_COLUMNS", {})


def _tables_of_sources() -> list[str]:
    return [d.name for d in helper_definitions() if d.kind == "table" and source_tables()[d.name]]


def _rows(con, name: str) -> list[tuple]:
    return con.execute(f"SELECT * FROM {name} ORDER BY ALL").fetchall()


def test_empty_inputs_give_empty_tables_with_the_columns_their_queries_give(unlearnt):
    computed = connect()
    assert all(known_empty(name, empty_sources(computed)) is None for name in _tables_of_sources())
    create_views(computed)  # every query runs, and teaches the columns
    assert {name: _rows(computed, name) for name in _tables_of_sources()} == dict.fromkeys(_tables_of_sources(), [])
    made = connect()
    assert all(known_empty(name, empty_sources(made)) for name in _tables_of_sources())
    create_views(made)
    assert made.execute(_COLUMNS_SQL).fetchall() == computed.execute(_COLUMNS_SQL).fetchall()
    assert {name: _rows(made, name) for name in _tables_of_sources()} == dict.fromkeys(_tables_of_sources(), [])


def test_a_run_without_memory_records_gets_the_same_helper_tables(unlearnt):
    create_views(connect())  # learnt on empty inputs
    run = load_export(next(p for p in EXAMPLE.iterdir() if p.is_dir())).con
    assert {"memory_records", "op_memory"} <= empty_sources(run) and "ops" not in empty_sources(run)
    assert known_empty("_memory_total", empty_sources(run)) and not known_empty("_memory_peak", empty_sources(run))
    create_views(run)
    made = {d.name: _rows(run, d.name) for d in helper_definitions() if d.kind != "macro"}
    empty_tables._COLUMNS.clear()  # now every query runs on the same rows
    run.execute("DROP TABLE _helper_views_state")
    create_views(run)
    assert made == {d.name: _rows(run, d.name) for d in helper_definitions() if d.kind != "macro"}
    assert made["_time_breakdown"]  # the run's own tables were computed


def test_a_table_made_empty_is_computed_once_its_inputs_hold_rows(unlearnt):
    run = load_export(next(p for p in EXAMPLE.iterdir() if p.is_dir())).con
    create_views(run)
    expected = _rows(run, "_busy_intervals")
    create_views(connect())  # learnt on empty inputs
    con = connect()
    assert known_empty("_busy_intervals", empty_sources(con))
    create_views(con)
    con.register("_their_ops", run.sql("FROM ops").to_arrow_table())
    con.execute("INSERT INTO ops SELECT * FROM _their_ops")
    create_views(con)
    assert expected and _rows(con, "_busy_intervals") == expected
