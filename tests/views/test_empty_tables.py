"""Helper tables of empty inputs made without their queries: the same columns, types and rows as computed; a
table whose @empty_without line names an empty input is empty when computed."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.ingest import load_export
from analyzer.ingest.database import connect
from analyzer.rule_engine.views import build, create_views, helper_definitions
from analyzer.rule_engine.views.empty_tables import empty_sources, known_empty, source_tables
from tests.views.test_memory import MEMORY, OP_MEMORY, RUNS, STEPS
from tests.views.view_case import database

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "examples" / "resnet_host_sync"

_COLUMNS_SQL = """
SELECT table_name, column_name, data_type FROM duckdb_columns()
WHERE database_name = 'temp' AND table_name LIKE '\\_%' ESCAPE '\\' ORDER BY table_name, column_index
"""


def _every_query_runs(monkeypatch) -> None:
    monkeypatch.setattr(build, "known_empty", lambda name, empty: None)


def _tables_of_sources() -> list[str]:
    return [d.name for d in helper_definitions() if d.kind == "table" and source_tables()[d.name]]


def _rows(con, name: str) -> list[tuple]:
    return con.execute(f"SELECT * FROM {name} ORDER BY ALL").fetchall()


def _relations(con) -> dict[str, list[tuple]]:
    return {d.name: _rows(con, d.name) for d in helper_definitions() if d.kind != "macro"}


@pytest.mark.slow
def test_empty_inputs_give_empty_tables_with_the_columns_their_queries_give(monkeypatch):
    made = connect()
    assert all(known_empty(name, empty_sources(made)) for name in _tables_of_sources())
    create_views(made)
    _every_query_runs(monkeypatch)
    computed = connect()
    create_views(computed)
    assert made.execute(_COLUMNS_SQL).fetchall() == computed.execute(_COLUMNS_SQL).fetchall()
    assert _relations(made) == _relations(computed)
    assert {name: _rows(computed, name) for name in _tables_of_sources()} == dict.fromkeys(_tables_of_sources(), [])


@pytest.mark.slow
def test_a_run_without_memory_records_gets_the_same_helper_tables(monkeypatch):
    run = load_export(next(p for p in EXAMPLE.iterdir() if p.is_dir())).con
    assert {"memory_records", "op_memory"} <= empty_sources(run) and "ops" not in empty_sources(run)
    assert known_empty("_memory_total", empty_sources(run)) and known_empty("_memory_peak", empty_sources(run))
    assert not known_empty("_time_breakdown", empty_sources(run))
    create_views(run)
    made = _relations(run)
    _every_query_runs(monkeypatch)
    run.execute("DROP TABLE _helper_views_state")  # computed again, every query on the same rows
    create_views(run)
    assert made == _relations(run)
    assert made["_time_breakdown"]  # the run's own tables were computed


@pytest.mark.slow
def test_a_table_made_empty_is_computed_once_its_inputs_hold_rows():
    run = load_export(next(p for p in EXAMPLE.iterdir() if p.is_dir())).con
    create_views(run)
    expected = _rows(run, "_busy_intervals")
    con = connect()
    assert known_empty("_busy_intervals", empty_sources(con))
    create_views(con)
    con.register("_their_ops", run.sql("FROM ops").to_arrow_table())
    con.execute("INSERT INTO ops SELECT * FROM _their_ops")
    create_views(con)
    assert expected and _rows(con, "_busy_intervals") == expected


@pytest.mark.slow  # every helper table computed twice: the full suite, not the fast loop
def test_a_table_computed_without_a_table_of_its_empty_without_line_is_empty(monkeypatch):
    inputs = {"memory_records": MEMORY, "op_memory": OP_MEMORY, "steps": STEPS, "runs": RUNS}
    claims = [(d.name, table) for d in helper_definitions() for table in d.empty_without]
    assert {name for name, _ in claims} == {"_memory_peak", "_memory_at_peak", "_memory_steps"}
    _every_query_runs(monkeypatch)
    full = database(**inputs)
    for name, table in claims:
        assert _rows(full, name), name  # rows with every input: the empty one below is the missing table's doing
        without = database(**{t: rows for t, rows in inputs.items() if t != table})
        assert _rows(without, name) == [], (name, table)
        assert known_empty(name, empty_sources(without)), (name, table)
