"""Helpers made as they are needed: a few rules' queries get the helpers they name and those these read, a later
call the rest, and a change of the tables makes again every helper made before (none is left stale)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.ingest import load_export
from analyzer.rule_engine.views import create_views, helper_definitions
from analyzer.rule_engine.views.definitions import helpers_read

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "examples" / "resnet_host_sync"

_MADE_SQL = "SELECT function_name FROM duckdb_functions() WHERE function_type = 'table_macro' AND NOT internal"


def _made(con) -> set[str]:
    """The helpers present in ``con``: its TEMP relations and macros named like a helper."""
    names = {d.name for d in helper_definitions()}
    relations = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() UNION ALL SELECT view_name FROM duckdb_views() WHERE temporary"
        ).fetchall()
    }
    macros = {r[0] for r in con.execute(_MADE_SQL).fetchall()}
    return (relations | macros) & names


def _rows(con, name: str) -> list[tuple]:
    return con.execute(f"SELECT * FROM {name} ORDER BY ALL").fetchall()


@pytest.mark.slow
def test_a_query_gets_what_it_reads_and_a_later_call_the_rest():
    con = load_export(next(p for p in EXAMPLE.iterdir() if p.is_dir())).con
    every = load_export(next(p for p in EXAMPLE.iterdir() if p.is_dir())).con
    create_views(every)
    query = "SELECT run_id, sum(busy_us) FROM _op_type_busy GROUP BY run_id"
    create_views(con, needs=[query])
    wanted = helpers_read([query])
    assert "_op_type_busy" in wanted and wanted < {d.name for d in helper_definitions()}
    assert _made(con) == wanted
    assert _rows(con, "_op_type_busy") == _rows(every, "_op_type_busy")
    create_views(con)
    assert _made(con) == _made(every) == {d.name for d in helper_definitions()}
    for name in ("_time_breakdown", "_gap_causes", "_op_type_busy"):
        assert _rows(con, name) == _rows(every, name)


def test_helpers_made_before_are_made_again_when_the_tables_change():
    con = load_export(next(p for p in EXAMPLE.iterdir() if p.is_dir())).con
    create_views(con, needs=["FROM _op_type_busy"])
    before = _rows(con, "_op_type_busy")
    con.execute("DELETE FROM ops WHERE op_type = (SELECT op_type FROM _op_type_busy ORDER BY busy_us DESC LIMIT 1)")
    create_views(con, needs=["FROM _run_span"])  # names another helper only
    assert "_op_type_busy" in _made(con) and _rows(con, "_op_type_busy") != before
    assert len(_rows(con, "_op_type_busy")) == len(before) - 1
