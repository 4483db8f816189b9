"""The rows an evidence query returns, counted without sorting them: its final ORDER BY left out of the count.

An evidence query ends in an ORDER BY (the rows a finding shows first), which DuckDB keeps in a subquery
even under ``count(*)``: every row would be sorted only to be counted (a row per device gap of an export,
millions on a big one). The order never changes how many rows there are, so the count reads the query
cut before that clause. DuckDB's own parser says where the clause is (``json_serialize_sql``): only a
query whose last clause is its top-level ORDER BY (no LIMIT or OFFSET after it, which a cut would drop)
and whose text names it plainly before its first term is cut; any other is counted whole.
"""

from __future__ import annotations

import json
import re
from typing import Any

import duckdb

from analyzer.rule_engine.validation import sql_params

_ORDER_BY_AT_END = re.compile(r"\bORDER\s+BY\s*$", re.IGNORECASE)


def count_rows(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> int:
    """How many rows ``sql`` (one SELECT, parameters ``params``) returns. The cut query is given only the
    parameters it still names (the clause may have been the only one to name one; DuckDB refuses unused ones)."""
    cut = unordered(con, sql)
    used = sql_params(cut)
    return con.execute(f"SELECT count(*) FROM ({cut})", {k: v for k, v in params.items() if k in used}).fetchall()[0][0]


def unordered(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    """``sql`` without its final top-level ORDER BY clause, or ``sql`` itself when it ends otherwise.

    >>> con = duckdb.connect()
    >>> unordered(con, "SELECT x FROM range(3) t(x) ORDER BY x DESC")
    'SELECT x FROM range(3) t(x) '
    >>> unordered(con, "SELECT x FROM range(3) t(x) ORDER BY x LIMIT 2")
    'SELECT x FROM range(3) t(x) ORDER BY x LIMIT 2'
    """
    ((text,),) = con.execute("SELECT json_serialize_sql(?)", [sql]).fetchall()
    tree = json.loads(text)
    statements = tree.get("statements") or []
    if tree.get("error") or len(statements) != 1:
        return sql
    modifiers = statements[0].get("node", {}).get("modifiers") or []
    if [m.get("type") for m in modifiers] != ["ORDER_MODIFIER"]:
        return sql
    terms = modifiers[0].get("orders") or []
    locations = [t.get("expression", {}).get("query_location") for t in terms]
    if not locations or not all(isinstance(at, int) and 0 <= at <= len(sql) for at in locations):
        return sql
    head = sql[: min(locations)]
    clause = _ORDER_BY_AT_END.search(head)
    return head[: clause.start()] if clause else sql
