"""Keep a comparison's accuracy tables in a catalog file (`--catalog`), replacing earlier rows of the same run."""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.accuracy.tables import SCOPE, create_accuracy_tables
from analyzer.ingest.schema import tables_for_scope


def store_in_catalog(con: duckdb.DuckDBPyConnection, run_id: str, catalog: Path) -> None:
    """Copy every accuracy table's rows of ``run_id`` from ``con`` into ``catalog`` in one transaction.

    Raises analyzer.runs.catalog.CatalogError when the file is not a catalog or is in use.
    """
    from analyzer.ingest.database import all_or_nothing, insert_tables
    from analyzer.runs.catalog import open_catalog

    rows = {
        name: con.sql(f"SELECT * FROM {name} WHERE run_id = $run_id", params={"run_id": run_id}).to_arrow_table()
        for name in tables_for_scope(SCOPE)
    }
    target = open_catalog(Path(catalog))
    try:
        create_accuracy_tables(target)
        with all_or_nothing(target):
            for name in rows:
                target.execute(f"DELETE FROM {name} WHERE run_id = ?", [run_id])
            insert_tables(target, rows)
    finally:
        target.close()
