"""THE catalog schema: every table a batch catalog (``FILE.duckdb``) holds, declared in ``catalog_schema.toml``.

A catalog keeps, per run, a small summary of what ingest and diagnosis found (never the raw
event tables), so that listing, querying, diffing and sweeping many runs needs no re-ingest.
``docs/catalog.md`` is generated from it (``npu-triage runs --schema-markdown``).
Rows carry no wall-clock timestamps: an interrupted batch that is rerun yields the same rows.
"""

from __future__ import annotations

from pathlib import Path

from analyzer.ingest.schema import Table, load_tables

# 2: findings.explained_* (a job's explanations applied to its ranks' findings); catalog.py migrates a format 1
CATALOG_FORMAT_VERSION = 2
CATALOG_TABLES: dict[str, Table] = load_tables(Path(__file__).with_name("catalog_schema.toml"))[0]


def catalog_ddl(table: str, name: str | None = None) -> str:
    """CREATE TABLE statement for one catalog table.

    >>> catalog_ddl("failures").splitlines()[0]
    'CREATE TABLE IF NOT EXISTS failures ('
    """
    return CATALOG_TABLES[table].ddl(name)


PER_RUN_TABLES: tuple[str, ...] = tuple(n for n, t in CATALOG_TABLES.items() if t.columns[0].name == "run_id")
