"""An evidence query's rows are counted without its final ORDER BY, and only that clause is ever left out."""

from __future__ import annotations

import glob
import tomllib

import duckdb
import pytest

from analyzer.rule_engine.evidence_count import count_rows, unordered


@pytest.fixture
def con():
    con = duckdb.connect()
    con.execute("CREATE TABLE g AS SELECT range AS i, range % 7 AS k FROM range(1000)")
    yield con
    con.close()


@pytest.mark.parametrize(
    ("sql", "cut"),
    [
        ("SELECT i FROM g ORDER BY i DESC", "SELECT i FROM g "),
        (
            "WITH w AS (SELECT * FROM g ORDER BY k) SELECT k, count(*) FROM w GROUP BY k\nORDER BY 2 DESC, k",
            "WITH w AS (SELECT * FROM g ORDER BY k) SELECT k, count(*) FROM w GROUP BY k\n",
        ),
        ("SELECT i FROM g ORDER BY i LIMIT 5", "unchanged"),
        ("SELECT i FROM g ORDER BY i OFFSET 5", "unchanged"),
        ("SELECT i FROM (SELECT i FROM g ORDER BY i) t", "unchanged"),
        ("SELECT i, row_number() OVER (ORDER BY i) FROM g", "unchanged"),
        ("SELECT i FROM g UNION ALL SELECT k FROM g ORDER BY 1", "SELECT i FROM g UNION ALL SELECT k FROM g "),
        ("SELECT i FROM g ORDER BY -- by size\n i", "unchanged"),
        ("SELECT i FROM g WHERE 'ORDER BY ' <> '' ORDER BY i", "SELECT i FROM g WHERE 'ORDER BY ' <> '' "),
        ("SELECT i FROM g; SELECT 1", "unchanged"),
        ("SELEC i FROM g ORDER BY i", "unchanged"),
    ],
)
def test_only_a_final_top_level_order_by_is_cut(con, sql, cut):
    got = unordered(con, sql)
    assert got == (sql if cut == "unchanged" else cut)
    if got != sql:  # what is left counts the same rows
        count = "SELECT count(*) FROM ({})"
        assert con.execute(count.format(got)).fetchall() == con.execute(count.format(sql)).fetchall()


def test_the_count_sorts_nothing(con):
    sql = "SELECT i, k FROM g WHERE k > $low ORDER BY k DESC, i"
    plan = con.execute(f"EXPLAIN SELECT count(*) FROM ({unordered(con, sql)})", {"low": 2}).fetchall()[0][1]
    assert "ORDER" not in plan.upper()
    assert count_rows(con, sql, {"low": 2}) == 3 * 143 + 142  # k = 3, 4, 5 and 6 of 0..6 over 1,000 rows


def test_a_parameter_only_the_order_named_is_not_passed_to_the_count(con):
    # DuckDB refuses a named parameter the statement does not use: the cut query loses $subject
    sql = "SELECT i, k FROM g WHERE k = $k ORDER BY (k::VARCHAR = $subject) DESC, i"
    assert count_rows(con, sql, {"k": 3, "subject": "3"}) == 143


def test_every_built_in_evidence_query_counts_what_it_returns():
    con = duckdb.connect()
    for path in sorted(glob.glob("rules/*/*.toml")):
        with open(path, "rb") as f:
            evidence = tomllib.load(f).get("evidence", {}).get("sql")
        if evidence:
            sql = evidence.rstrip().rstrip(";")
            assert unordered(con, sql) != sql, path  # each ends in its ORDER BY, which the count leaves out
    con.close()
