"""The evidence of many findings in one query, each finding's rows in its evidence query's own order.

A LATERAL join runs the evidence query once per finding ($run_id, $subject), scanned once for all
(set_query.py), but DuckDB does not keep a subquery's ORDER BY. So the query is rewritten through DuckDB's
own parser (``json_serialize_sql``) with ``row_number()`` and ``rank()`` over that same ORDER BY: the rows of
a finding are put back in that order, and a finding whose kept rows tie in it (their order would be DuckDB's
choice) is left to its own query, as are queries of another shape (DISTINCT, LIMIT, a set operation).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import duckdb

from analyzer.rule_engine.set_query import RUNS_ALIAS, for_every_run
from analyzer.rule_engine.validation import sql_params

# (columns, rows kept, total rows) of one finding's evidence.
Evidence = tuple[tuple[str, ...], tuple[tuple[Any, ...], ...], int]

_N, _RANK, _POS, _TOTAL = "__evidence_n", "__evidence_rank", "__evidence_pos", "__evidence_total"
_ADDED = (_N, _RANK, _POS, _TOTAL)
_SET_SQL = f"""
SELECT * FROM (
    SELECT {RUNS_ALIAS}.__key, q.*, count(*) OVER (PARTITION BY {RUNS_ALIAS}.__key) AS {_TOTAL},
           row_number() OVER (PARTITION BY {RUNS_ALIAS}.__key ORDER BY q.{_N}) AS {_POS}
    FROM (SELECT unnest($__keys::INTEGER[]) AS __key, unnest($__runs::VARCHAR[]) AS __run,
                 unnest($__subjects) AS __subject) {RUNS_ALIAS},
         LATERAL (
{{sql}}
) q)
WHERE {_POS} <= $__limit + 1 ORDER BY __key, {_POS}"""  # one row more: a tie at the limit


def _column_names(expression: Any) -> set[str]:
    """The unqualified column names an expression of the parse tree reads."""
    if isinstance(expression, list):
        return {n for item in expression for n in _column_names(item)}
    if not isinstance(expression, dict):
        return set()
    if expression.get("class") == "COLUMN_REF" and len(expression["column_names"]) == 1:
        return {expression["column_names"][0]}
    return {n for value in expression.values() for n in _column_names(value)}


def _order_term(expression: dict, select: list[dict]) -> dict | None:
    """The ORDER BY term as the window's ORDER BY must say it (there a name is an input column, never
    an output alias): an ordinal or an alias becomes its select expression; None when unsure."""
    aliases = {item["alias"]: item for item in select if item.get("alias")}
    chosen = None
    if expression.get("class") == "CONSTANT" and expression["literal"].get("kind") == "INTEGER":
        position = int(expression["literal"]["text"])
        chosen = select[position - 1] if 0 < position <= len(select) else None
        if chosen is None or chosen.get("class") == "STAR":
            return None
    elif expression.get("class") == "COLUMN_REF" and expression["column_names"][0] in aliases:
        chosen = aliases[expression["column_names"][0]] if len(expression["column_names"]) == 1 else None
    if chosen is not None:
        return {**copy.deepcopy(chosen), "alias": ""}
    same = all(
        aliases[n].get("class") == "COLUMN_REF" and aliases[n]["column_names"][-1] == n
        for n in _column_names(expression)
        if n in aliases
    )
    return expression if same else None


def _window(con: duckdb.DuckDBPyConnection, function: str, orders: list[dict], alias: str) -> dict:
    template = _parsed(con, f"SELECT {function}() OVER (ORDER BY 1) AS {alias}")
    window = template["statements"][0]["node"]["select_list"][0]
    return {**window, "orders": orders}


def _parsed(con: duckdb.DuckDBPyConnection, sql: str) -> dict:
    """DuckDB's parse tree of ``sql`` (the parser only: no table is read)."""
    return json.loads(con.execute("SELECT json_serialize_sql(?)", [sql]).fetchall()[0][0])


# The rewritten evidence queries (``ordered``), by query text: the same whatever the connection.
_ORDERED: dict[str, str | None] = {}


def ordered(con: duckdb.DuckDBPyConnection, sql: str) -> str | None:
    """``sql`` with its rows' place in its own ORDER BY as two more columns (``row_number``, ``rank``);
    None when it is not one SELECT ordered by an ORDER BY, without DISTINCT, LIMIT or OFFSET."""
    if sql not in _ORDERED:
        try:
            _ORDERED[sql] = _ordered(con, sql)
        except (duckdb.Error, KeyError, IndexError, ValueError):  # a parse tree not of the form expected
            _ORDERED[sql] = None
    return _ORDERED[sql]


def _ordered(con: duckdb.DuckDBPyConnection, sql: str) -> str | None:
    tree = _parsed(con, sql)
    if tree.get("error") or len(tree["statements"]) != 1 or tree["statements"][0]["node"]["type"] != "SELECT_NODE":
        return None
    node = tree["statements"][0]["node"]
    if [m["type"] for m in node["modifiers"]] != ["ORDER_MODIFIER"]:
        return None
    orders = []
    for order in node["modifiers"][0]["orders"]:
        term = _order_term(order["expression"], node["select_list"])
        if term is None:
            return None
        orders.append({**order, "expression": term})
    node["select_list"] += [_window(con, "row_number", orders, _N), _window(con, "rank", orders, _RANK)]
    return con.execute("SELECT json_deserialize_sql(?)", [json.dumps(tree)]).fetchall()[0][0]


def evidence_of(
    con: duckdb.DuckDBPyConnection, sql: str, binding: dict[str, Any], keys: list[tuple[str, Any]], limit: int
) -> dict[tuple[str, Any], Evidence]:
    """The evidence of each (run, subject) of ``keys`` from the evidence query ``sql`` (``binding``: the
    values of its other parameters), read in one query; a key left out is to be asked alone (see the
    module's doc)."""
    rewritten = ordered(con, sql.rstrip().rstrip(";"))
    if rewritten is None or len(keys) < 2:
        return {}
    query = _SET_SQL.format(sql=for_every_run(rewritten, subject=True))
    used = sql_params(query)
    values = {k: v for k, v in binding.items() if k in used}
    values.update(__keys=list(range(len(keys))), __runs=[r for r, _ in keys], __subjects=[s for _, s in keys])
    try:
        cursor = con.execute(query, {**values, "__limit": limit})
        names = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
    except duckdb.Error:
        return {}
    columns = tuple(n for n in names[1:] if n not in _ADDED)
    if len(set(names)) < len(names) or len(columns) != len(names) - 1 - len(_ADDED):
        return {}
    return _split(keys, names, columns, rows, limit)


def _split(keys: list[tuple[str, Any]], names: list[str], columns: tuple[str, ...], rows: list, limit: int) -> dict:
    """Each key's evidence (raw values) from the rows of the set query: its first ``limit`` rows, read with
    one more; keys whose rows read tie in the order are left out."""
    at = {n: i for i, n in enumerate(names)}
    kept = [at[c] for c in columns]
    found: dict[int, list[tuple]] = {}
    for row in rows:
        found.setdefault(row[0], []).append(row)
    out = {}
    for n, key in enumerate(keys):
        mine = found.get(n, [])
        if any(row[at[_N]] != row[at[_RANK]] for row in mine):
            continue  # two rows tie in the ORDER BY: which comes first is the evidence query's own choice
        total = mine[0][at[_TOTAL]] if mine else 0
        out[key] = (columns, tuple(tuple(row[i] for i in kept) for row in mine[:limit]), total)
    return out
