"""The simple CSV files as declarations (``declared_tables.toml``): each kind's normalized table, its columns
by header name, its constants.

One loader, ``load_declared``, reads every kind declared here through ``csv_columns.load_csv_table``.
A file family that needs more than a declaration (op_summary, task_time, core_utilization) keeps its
own reader module. Columns are read by header name, never by position; the first accepted header
present wins, so a column written in KB and in MB by different producers is two fields.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from functools import partial
from pathlib import Path

import duckdb

from analyzer.ingest.csv.csv_columns import CsvTarget, Field, load_csv_table
from analyzer.ingest.declaration_lists import expand, shared_sets
from analyzer.ingest.model import ReadContext


def _declared(path: Path) -> dict[str, CsvTarget]:
    """The kinds ``declared_tables.toml`` declares."""
    model = tomllib.loads(path.read_text(encoding="utf-8"))
    shared = shared_sets(model, _field)
    return {
        kind: CsvTarget(
            d["table"],
            expand(d["fields"], shared, _field),
            d["expected"],
            d.get("constants"),
            d.get("derived"),
            d.get("replaced"),
        )
        for kind, d in model["kinds"].items()
    }


def _field(entry: list) -> Field:
    """A field from its declaration [target, [headers], how, required?]."""
    target, headers, how, *required = entry
    return Field(target, tuple(headers), how, *required)


DECLARED: dict[str, CsvTarget] = _declared(Path(__file__).with_name("declared_tables.toml"))


def load_declared(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext, kind: str) -> int:
    """Read the files of a declared kind (all slices) into its table. Returns rows inserted."""
    d = DECLARED[kind]
    return load_csv_table(con, paths, ctx, d.table, d.fields, d.expected, d.constants, d.derived, d.replaced)


def reader(kind: str) -> Callable[[duckdb.DuckDBPyConnection, tuple[Path, ...], ReadContext], int]:
    """The reader of one declared kind, with the signature of every reader in ``readers.READERS``."""
    return partial(load_declared, kind=kind)
