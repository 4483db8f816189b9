"""The normalized table model: every table, column, DuckDB type, unit and meaning, declared once in ``schema.toml``.

Readers fill these tables (``INSERT INTO <table> BY NAME``), rules query them, reports read
them. Raw export headers never appear outside the ingest module that maps them. Column names
are snake_case and carry their unit (``_ns``, ``_us``, ``_ms``, ``_mb``, ``_ratio``, ``_pct``,
``_count``); ``_ratio`` is a 0-1 fraction and ``_pct`` is 0-100. Times that are instants are
exact ``BIGINT`` nanoseconds since the Unix epoch, as the export wrote them; durations are
``DOUBLE`` microseconds. ``NULL`` means "not collected / not applicable", never zero.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from analyzer.ingest.declaration_lists import expand, shared_sets


@dataclass(frozen=True)
class Column:
    """One column of a normalized table."""

    name: str
    type: str  # DuckDB type
    unit: str  # "" when dimensionless or textual
    doc: str


@dataclass(frozen=True)
class Table:
    """One normalized table."""

    name: str
    doc: str
    columns: tuple[Column, ...]

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def ddl(self, name: str | None = None) -> str:
        """CREATE TABLE statement for this table (under ``name`` when given)."""
        cols = ",\n".join(f"    {c.name} {c.type}" for c in self.columns)
        return f"CREATE TABLE IF NOT EXISTS {name or self.name} (\n{cols}\n)"


def load_tables(path: Path) -> tuple[dict[str, Table], dict[str, tuple[Column, ...]]]:
    """The tables a table-model TOML file declares (``schema.toml``'s form), and its shared column sets."""
    model = tomllib.loads(path.read_text(encoding="utf-8"))
    shared = shared_sets(model, _column)
    tables = {name: Table(name, t["doc"], expand(t["columns"], shared, _column)) for name, t in model["tables"].items()}
    return tables, shared


def _column(entry: list) -> Column:
    """A column from its declaration [name, type, unit, doc]."""
    return Column(*entry)


TABLES, _SHARED = load_tables(Path(__file__).with_name("schema.toml"))


def ddl(table: str, name: str | None = None) -> str:
    """CREATE TABLE statement for one normalized table.

    >>> ddl("l2_cache").splitlines()[0]
    'CREATE TABLE IF NOT EXISTS l2_cache ('
    """
    return TABLES[table].ddl(name)


def column(table: str, name: str) -> Column:
    """Look up one column; KeyError when absent."""
    for c in TABLES[table].columns:
        if c.name == name:
            return c
    raise KeyError(f"{table}.{name}")


def has_column(table: str, name: str) -> bool:
    """True when the schema declares table.name.

    >>> has_column("ops", "mte_time_us"), has_column("ops", "nope")
    (True, False)
    """
    return table in TABLES and any(c.name == name for c in TABLES[table].columns)


PIPE_COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in _SHARED["pipe"])
