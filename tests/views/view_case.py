"""Table tests of the SQL modules in Perfetto's diff-test shape: inline input rows in, inline expected rows out.

Input rows are CSV text per table of a table model (the rule fixtures' form, loaded by
``fixture_tables.load_fixture_tables``: columns typed by the model, the others NULL); the helper views
are then created by the engine's own ``create_views``.
"""

from __future__ import annotations

import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from analyzer.ingest.database import connect
from analyzer.rule_engine.fixture_tables import load_fixture_tables
from analyzer.rule_engine.views import create_views


def database(**tables: str) -> duckdb.DuckDBPyConnection:
    """A connection (``ingest.database.connect``) holding the rows of each ``table=CSV text``, and the helper views."""
    con = connect()
    with tempfile.TemporaryDirectory(prefix="npu-triage-view-case-") as folder:
        for name, text in tables.items():
            (Path(folder) / f"{name}.csv").write_text(textwrap.dedent(text).strip() + "\n", encoding="utf-8")
        load_fixture_tables(con, Path(folder))
    create_views(con)
    return con


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> list[tuple]:
    """The rows of a query (give it an ORDER BY), as tuples."""
    return con.execute(sql, params).fetchall()


def module_database(**tables: str):
    """A module-scoped pytest fixture holding ``database(**tables)``, for a test file whose tests share their inputs."""

    @pytest.fixture(scope="module")
    def con() -> Iterator[duckdb.DuckDBPyConnection]:
        c = database(**tables)
        yield c
        c.close()

    return con
