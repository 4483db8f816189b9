"""Helper tables whose every source table is empty, created empty from their known columns instead of planned.

Planning a helper table's query costs the same whether its inputs hold rows or not, and a connection
often holds none of a module's inputs (a batch's job tables hold no kernels, a run without memory
records has nothing for memory.sql). Every helper is empty when its inputs are (views/__init__.py), so
such a table is created from the columns its query gave the first time this process computed it on
empty inputs: the same columns and types, without the query.
"""

from __future__ import annotations

import re
from functools import cache

import duckdb

from analyzer.ingest.schema import TABLES
from analyzer.rule_engine.views.definitions import helper_definitions

# Columns of the helper tables computed on empty inputs in this process: name -> CREATE TABLE column list.
_COLUMNS: dict[str, str] = {}

_COLUMNS_SQL = """
SELECT table_name, string_agg('"' || replace(column_name, '"', '""') || '" ' || data_type, ', ' ORDER BY column_index)
FROM duckdb_columns() WHERE database_name = 'temp' AND table_name IN (SELECT unnest($names::VARCHAR[]))
GROUP BY table_name
"""


@cache
def source_tables() -> dict[str, frozenset[str]]:
    """Per helper definition, the normalized tables it is derived from, through the helpers it reads."""
    sources: dict[str, frozenset[str]] = {}
    for d in helper_definitions():  # in dependency order: what a definition reads is placed before it
        words = set(re.findall(r"\w+", d.sql))
        sources[d.name] = frozenset(
            {t for t in TABLES if t in words}.union(*(sources[h] for h in sources if h in words))
        )
    return sources


def empty_sources(con: duckdb.DuckDBPyConnection) -> frozenset[str]:
    """The normalized tables the helpers read that hold no row in ``con``, found in one query."""
    tables = sorted(set().union(*source_tables().values()))
    row = con.execute(f"SELECT [{', '.join(f'NOT EXISTS (FROM {t})' for t in tables)}]").fetchall()[0][0]
    return frozenset(t for t, empty in zip(tables, row, strict=True) if empty)


def known_empty(name: str, empty: frozenset[str]) -> str | None:
    """The statement creating helper table ``name`` empty when every table it derives from is in ``empty``
    and its columns are known, else None (then its query runs)."""
    sources = source_tables()[name]
    if not sources or not sources <= empty or name not in _COLUMNS:
        return None
    return f"CREATE OR REPLACE TEMP TABLE {name} ({_COLUMNS[name]})"


def remember_columns(con: duckdb.DuckDBPyConnection, names: list[str]) -> None:
    """Keep the columns of the helper tables ``names``, just computed on empty inputs, for later connections."""
    for name, columns in con.execute(_COLUMNS_SQL, {"names": names}).fetchall():
        _COLUMNS[name] = columns
