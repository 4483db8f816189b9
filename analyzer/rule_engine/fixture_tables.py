"""Load a rule fixture folder (one ``<table>.csv`` per table) into the tables, schema-typed."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb

from analyzer.ingest.database import append_rows
from analyzer.ingest.schema import INSTRUMENT_TABLES, TABLES, Table


class FixtureError(Exception):
    """A fixture CSV naming an unknown table or column."""


def _csv_header(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as fh:
        return next(csv.reader(fh), [])


def _model_table(name: str) -> Table | None:
    """The declared table of that name: the profile's, else an instrument's (logs, dumps)."""
    if name in TABLES:
        return TABLES[name]
    return next((tables[name] for tables in INSTRUMENT_TABLES.values() if name in tables), None)


def load_fixture_tables(con: duckdb.DuckDBPyConnection, folder: Path) -> list[str]:
    """INSERT every ``<table>.csv`` of ``folder`` into its table BY NAME; returns the run ids found.

    Column types come from the table model (schema.toml, or an instrument's: an instrument's table is
    created in ``con`` when absent), so a CSV holds only the columns it needs (the rest stay NULL) and
    empty fields are NULL.
    """
    for path in sorted(Path(folder).glob("*.csv")):
        table = path.stem
        model = _model_table(table)
        if model is None:
            raise FixtureError(f"{path}: {table!r} is not a normalized table")
        con.execute(model.ddl())
        header = _csv_header(path)
        types = {c.name: c.type for c in model.columns}
        if unknown := [name for name in header if name not in types]:
            raise FixtureError(f"{path}: column {table}.{unknown[0]} is not in the schema")
        types = {name: types[name] for name in header}
        spec = ", ".join(f"'{name}': '{type_}'" for name, type_ in types.items())
        append_rows(
            con,
            table,
            f"SELECT * FROM read_csv($path, header = true, columns = {{{spec}}}, nullstr = '')",
            {"path": str(path)},
        )
    return fixture_run_ids(con)


def fixture_run_ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every run id present in any table (the profile's, and the instruments' tables created here), sorted."""
    existing = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    instruments = sorted(
        name
        for tables in INSTRUMENT_TABLES.values()
        for name, table in tables.items()
        if name in existing and "run_id" in table.column_names()
    )
    union = " UNION ".join(f"SELECT run_id FROM {t}" for t in [*TABLES, *instruments])
    return [
        r[0]
        for r in con.execute(f"SELECT DISTINCT run_id FROM ({union}) WHERE run_id IS NOT NULL ORDER BY 1").fetchall()
    ]
