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

# The table models of the toolchain's other instruments, by the rule scope that reads them: each is
# declared in a TOML file of the same form beside its package and created only in that instrument's
# connections, never in a profile's. A model whose file is not there yet is empty.
_ROOT = Path(__file__).resolve().parents[1]
INSTRUMENT_SCHEMAS: dict[str, Path] = {
    "dump": _ROOT / "accuracy" / "schema.toml",  # accuracy dumps against a reference (npu-triage accuracy)
    "logs": _ROOT / "logs" / "schema.toml",  # CANN logs (npu-triage logs, diagnose --logs)
}
INSTRUMENT_TABLES: dict[str, dict[str, Table]] = {
    scope: load_tables(path)[0] if path.is_file() else {} for scope, path in INSTRUMENT_SCHEMAS.items()
}


def tables_for_scope(scope: str) -> dict[str, Table]:
    """The tables a rule of ``scope`` may read: an instrument's own model, else the profile's.

    >>> "ops" in tables_for_scope("run"), "ops" in tables_for_scope("dump")
    (True, False)
    """
    return INSTRUMENT_TABLES.get(scope, TABLES)


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


def has_column(table: str, name: str, scope: str = "run") -> bool:
    """True when the table model a rule of ``scope`` reads declares table.name.

    >>> has_column("ops", "mte_time_us"), has_column("ops", "nope")
    (True, False)
    """
    tables = tables_for_scope(scope)
    return table in tables and any(c.name == name for c in tables[table].columns)


PIPE_COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in _SHARED["pipe"])
