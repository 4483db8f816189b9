"""Load a rule fixture folder (one ``<table>.csv`` per table) into the tables, schema-typed."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb

from analyzer.errors import TriageError
from analyzer.ingest.database import append_rows
from analyzer.ingest.schema import INSTRUMENT_TABLES, TABLES, Table


class FixtureError(TriageError):
    """A fixture CSV naming an unknown table or column."""


def _csv_header(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as fh:
        return next(csv.reader(fh), [])


def load_fixture_tables(con: duckdb.DuckDBPyConnection, folder: Path) -> list[str]:
    """INSERT every ``<table>.csv`` of ``folder`` into its table BY NAME; returns the run ids found.

    Column types come from schema.py, so a CSV holds only the columns it needs (the rest stay NULL)
    and empty fields are NULL. A table of another instrument's model (an accuracy dump's, CANN logs')
    is created in ``con``, with the rest of its model, when a CSV names it.
    """
    present = _present(con)
    for path in sorted(Path(folder).glob("*.csv")):
        model = _model(path)
        table = model[path.stem]
        if not model.keys() <= present:  # (a connection of ingest.database.connect holds the profile's)
            con.execute(";\n".join(t.ddl() for t in model.values()))
            present |= model.keys()
        declared = {c.name: c.type for c in table.columns}
        header = _csv_header(path)
        if unknown := [name for name in header if name not in declared]:
            raise FixtureError(f"{path}: column {table.name}.{unknown[0]} is not in the schema")
        types = {name: declared[name] for name in header}
        spec = ", ".join(f"'{name}': '{type_}'" for name, type_ in types.items())
        append_rows(
            con,
            table.name,
            f"SELECT * FROM read_csv($path, header = true, columns = {{{spec}}}, nullstr = '')",
            {"path": str(path)},
        )
    return fixture_run_ids(con)


def _model(path: Path) -> dict[str, Table]:
    """The table model holding the table a fixture CSV fills: the profile's, else an instrument's."""
    model = next((m for m in (TABLES, *INSTRUMENT_TABLES.values()) if path.stem in m), None)
    if model is None:
        raise FixtureError(f"{path}: {path.stem!r} is not a normalized table")
    return model


def _present(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The names of the tables ``con`` holds."""
    return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}


def fixture_run_ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every run id present in any table (an instrument's too, when created), sorted."""
    present = _present(con)
    names = [*TABLES]
    names += [
        name
        for tables in INSTRUMENT_TABLES.values()
        for name, table in tables.items()
        if name in present and name not in TABLES and "run_id" in table.column_names()  # a lookup table has none
    ]
    union = " UNION ".join(f"SELECT run_id FROM {t}" for t in names)
    return [
        r[0]
        for r in con.execute(f"SELECT DISTINCT run_id FROM ({union}) WHERE run_id IS NOT NULL ORDER BY 1").fetchall()
    ]
