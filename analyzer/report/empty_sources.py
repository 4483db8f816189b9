"""Whether a page query reads only tables that hold no rows at all (a job without memory, counters or logs):
its series are then known without running it again for every chunk of runs (report/runs_reader.py)."""

from __future__ import annotations

import re

import duckdb

from analyzer.ingest.schema import TABLES
from analyzer.rule_engine.views.definitions import helper_definitions
from analyzer.rule_engine.views.empty_tables import empty_among

# A query's parameters, bound to NULL only to name the tables it reads (DuckDB binds it to list them).
_PARAM = re.compile(r"\$\w+")


class EmptySources:
    """The tables of ``con`` (unchanged while it is asked: the pages are written after every table is
    filled) looked at once, all in one query: whether a query's tables, its views' included, are all empty."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self._queries: dict[str, bool] = {}
        self._empty: frozenset[str] | None = None

    def all_empty(self, sql: str) -> bool:
        """True when every table ``sql`` reads (through its views too) holds no row; False when one holds
        some, or when the tables cannot be named."""
        if sql not in self._queries:
            try:
                tables = self.con.get_table_names(_PARAM.sub("NULL", sql))
            except duckdb.Error:  # a query DuckDB will not bind without its parameters: run it, as before
                tables = set()
            self._queries[sql] = bool(tables) and all(self.table_empty(t) for t in sorted(tables))
        return self._queries[sql]

    def table_empty(self, table: str) -> bool:
        """True when ``table`` (a normalized or helper table of this connection) holds no row; False when it
        holds some or is not one (a view, a qualified name, a function)."""
        if self._empty is None:
            known = {*TABLES, *(d.name for d in helper_definitions() if d.kind == "table")}
            made = {name for (name,) in self.con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
            self._empty = empty_among(self.con, known & made)
        return table in self._empty
