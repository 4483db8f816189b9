"""Load a rule fixture folder (one ``<table>.csv`` per table) into the tables, schema-typed."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb

from analyzer.ingest.database import append_rows
from analyzer.ingest.schema import TABLES, column


class FixtureError(Exception):
    """A fixture CSV naming an unknown table or column."""


def _csv_header(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as fh:
        return next(csv.reader(fh), [])


def load_fixture_tables(con: duckdb.DuckDBPyConnection, folder: Path) -> list[str]:
    """INSERT every ``<table>.csv`` of ``folder`` into its table BY NAME; returns the run ids found.

    Column types come from schema.py, so a CSV holds only the columns it needs (the rest stay NULL)
    and empty fields are NULL.
    """
    for path in sorted(Path(folder).glob("*.csv")):
        table = path.stem
        if table not in TABLES:
            raise FixtureError(f"{path}: {table!r} is not a normalized table")
        header = _csv_header(path)
        try:
            types = {name: column(table, name).type for name in header}
        except KeyError as exc:
            raise FixtureError(f"{path}: column {exc.args[0]} is not in the schema") from None
        spec = ", ".join(f"'{name}': '{type_}'" for name, type_ in types.items())
        append_rows(
            con,
            table,
            f"SELECT * FROM read_csv($path, header = true, columns = {{{spec}}}, nullstr = '')",
            {"path": str(path)},
        )
    return fixture_run_ids(con)


def fixture_run_ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every run id present in any table, sorted."""
    union = " UNION ".join(f"SELECT run_id FROM {t}" for t in TABLES)
    return [
        r[0]
        for r in con.execute(f"SELECT DISTINCT run_id FROM ({union}) WHERE run_id IS NOT NULL ORDER BY 1").fetchall()
    ]
