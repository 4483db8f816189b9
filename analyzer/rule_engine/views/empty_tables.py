"""Helper tables whose every source table is empty, or one of the tables their ``@empty_without`` line names,
created empty from their documented columns instead of planned.

Planning a helper table's query costs the same whether its inputs hold rows or not, and a connection
often holds none of a module's inputs (a batch's job tables hold no kernels, a run without memory
records has nothing for memory.sql). Every helper is empty when its inputs are (views/__init__.py), so
such a table is created from its @column lines, whose names and types are DESCRIBE's
(tests/test_helper_view_docs.py): the same table, without the query.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

import duckdb

from analyzer.ingest.schema import TABLES
from analyzer.rule_engine.views.definitions import helper_definitions
from analyzer.sql_modules import SqlModuleError


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


@cache
def _declared_columns() -> dict[str, tuple[tuple[str, str], ...]]:
    """(column, DuckDB type) of every helper whose @column lines give them all: an ``X.*`` line stands for the
    columns of helper X; a STRUCT (any STRUCT) or the columns of a normalized table leave the helper out."""
    declared: dict[str, tuple[tuple[str, str], ...]] = {}
    for d in helper_definitions():
        columns: list[tuple[str, str]] = []
        for (column, _doc), type_ in zip(d.columns, d.types, strict=True):
            if column.endswith(".*") and column[:-2] in declared:
                columns += declared[column[:-2]]
            elif column.endswith(".*") or not type_ or type_ == "STRUCT":
                break
            else:
                columns.append((column, type_))
        else:
            declared[d.name] = tuple(columns)
    return declared


def empty_sources(con: duckdb.DuckDBPyConnection) -> frozenset[str]:
    """The normalized tables the helpers read that hold no row in ``con``, found in one query."""
    return empty_among(con, set().union(*source_tables().values()))


def empty_among(con: duckdb.DuckDBPyConnection, tables: Iterable[str]) -> frozenset[str]:
    """Those of ``tables`` (tables of ``con``, not views, whose query would run) that hold no row, found in one
    query."""
    names = sorted(set(tables))
    if not names:
        return frozenset()
    row = con.execute(f"SELECT [{', '.join(f'NOT EXISTS (FROM {t})' for t in names)}]").fetchall()[0][0]
    return frozenset(t for t, empty in zip(names, row, strict=True) if empty)


@cache
def _empty_without() -> dict[str, frozenset[str]]:
    """Per helper definition, the tables of its @empty_without line (a memory table is empty without memory
    records, whatever the run's tasks); each must be a table it derives from."""
    for d in helper_definitions():
        if stray := sorted(set(d.empty_without) - source_tables()[d.name]):
            raise SqlModuleError(f"{d.module}.sql: {d.name} is not derived from {', '.join(stray)} (@empty_without)")
    return {d.name: frozenset(d.empty_without) for d in helper_definitions()}


def known_empty(name: str, empty: frozenset[str]) -> str | None:
    """The statement creating helper table ``name`` empty when every table it derives from, or one of its
    @empty_without tables, is in ``empty`` and its documentation gives every column, else None (then its
    query runs)."""
    sources = source_tables()[name]
    columns = _declared_columns().get(name)
    if columns is None or not (sources and sources <= empty or _empty_without()[name] & empty):
        return None
    listed = ", ".join(f'"{column}" {type_}' for column, type_ in columns)
    return f"CREATE OR REPLACE TEMP TABLE {name} ({listed})"
