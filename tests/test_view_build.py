"""Helper relations built two at a time (view_build.py): order, visibility, failures."""

from __future__ import annotations

import duckdb
import pytest

from analyzer.ingest import numbered_rows
from analyzer.ingest.database import connect
from analyzer.rule_engine import view_build
from analyzer.rule_engine.view_build import CATALOG, build_relations, chain_lengths, dependencies, worker

RELATIONS = {
    "_base": "SELECT range AS x FROM range(10)",
    "_evens": "SELECT x FROM _base WHERE x % 2 = 0",
    "_odds": "SELECT x FROM _base WHERE x % 2 = 1",
    "_both": "SELECT (SELECT count(*) FROM _evens) AS evens, (SELECT count(*) FROM _odds) AS odds",
}


def test_dependencies_are_read_from_the_sql():
    assert dependencies(RELATIONS) == {
        "_base": set(),
        "_evens": {"_base"},
        "_odds": {"_base"},
        "_both": {"_evens", "_odds"},
    }


def test_every_relation_is_visible_to_the_caller_and_computed_after_what_it_reads():
    con = connect()
    build_relations(con, RELATIONS, plain=("_base",))
    assert con.execute("SELECT evens, odds FROM _both").fetchall() == [(5, 5)]
    views = con.execute(
        "SELECT view_name FROM duckdb_views() WHERE temporary AND starts_with(view_name, '_') ORDER BY 1"
    ).fetchall()
    assert views == [("_base",), ("_both",), ("_evens",), ("_odds",)]
    main_tables = con.execute(
        "SELECT table_name FROM duckdb_tables() "
        "WHERE database_name <> ? AND starts_with(table_name, '_') "
        "AND table_name NOT IN (SELECT unnest(?::VARCHAR[]))",
        [CATALOG, [*numbered_rows.ROWS.values(), numbered_rows.KEYS]],
    ).fetchall()
    assert main_tables == []  # no helper lands in the main (possibly file) database
    tables = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ? ORDER BY 1", [CATALOG]
    ).fetchall()
    assert tables == [("_both",), ("_evens",), ("_odds",)]


def test_a_failing_relation_raises_after_the_others_finish_and_can_be_rebuilt():
    con = connect()
    broken = {**RELATIONS, "_odds": "SELECT x FROM _base WHERE no_such_column = 1"}
    with pytest.raises(duckdb.BinderException):
        build_relations(con, broken, plain=("_base",))
    build_relations(con, RELATIONS, plain=("_base",))
    assert con.execute("SELECT evens, odds FROM _both").fetchall() == [(5, 5)]


# _head starts a chain of three; _lone, listed first, is a chain of one.
CHAINS = {
    "_lone": "SELECT 1 AS x",
    "_head": "SELECT 2 AS x",
    "_middle": "SELECT x FROM _head",
    "_tail": "SELECT x FROM _middle",
}


def test_chain_length_counts_the_relations_built_one_after_another():
    deps = dependencies(CHAINS)
    assert chain_lengths(deps) == {
        "_lone": 1,
        "_head": 3,
        "_middle": 2,
        "_tail": 1,
    }


def test_the_head_of_the_longest_chain_is_built_first(monkeypatch):
    monkeypatch.setattr(view_build, "_WORKERS", 1)  # one connection: built strictly in scheduling order
    con = connect()
    build_relations(con, CHAINS, plain=())
    order = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ? ORDER BY table_oid", [CATALOG]
    ).fetchall()
    assert [r[0] for r in order] == ["_head", "_middle", "_lone", "_tail"]


def test_relations_are_computed_one_at_a_time_once_more_is_spilled_than_the_limit_holds(monkeypatch):
    opened = []
    monkeypatch.setattr(view_build, "worker", lambda *args: opened.append(1) or worker(*args))
    roomy = connect()
    build_relations(roomy, RELATIONS, plain=("_base",))
    assert len(opened) == 2
    tight = connect("24MiB")
    tight.execute("CREATE TABLE big AS SELECT i, repeat('x', 40) || i AS s FROM range(1500000) t(i)")
    opened.clear()
    build_relations(tight, RELATIONS, plain=("_base",))  # DuckDB counts about 36 MiB of it spilled
    assert len(opened) == 1
    assert tight.execute("SELECT evens, odds FROM _both").fetchall() == [(5, 5)]
