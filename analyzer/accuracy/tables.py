"""The accuracy tables (schema.toml) in a DuckDB connection: created empty, filled from Arrow columns."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from analyzer.ingest.schema import tables_for_scope

SCOPE = "dump"


def create_accuracy_tables(con: duckdb.DuckDBPyConnection) -> None:
    """CREATE every table of the accuracy model (if absent) in ``con``."""
    con.execute(";\n".join(t.ddl() for t in tables_for_scope(SCOPE).values()))


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict]) -> None:
    """INSERT BY NAME rows (dicts keyed by column) into a table of the model, typed by its declaration."""
    if not rows:
        return
    declared = tables_for_scope(SCOPE)[table]
    names = [c.name for c in declared.columns if c.name in rows[0]]
    arrow = pa.table({name: [row.get(name) for row in rows] for name in names})
    con.register("_accuracy_rows", arrow)
    try:
        casts = ", ".join(f'CAST("{c.name}" AS {c.type}) AS "{c.name}"' for c in declared.columns if c.name in names)
        con.execute(f"INSERT INTO {table} BY NAME SELECT {casts} FROM _accuracy_rows")
    finally:
        con.unregister("_accuracy_rows")
