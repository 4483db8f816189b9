"""What the catalog commands (runs, query, export) share: opening the catalog read-only, the --format of rows."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb

from analyzer.cli.console import err
from analyzer.runs.catalog import CatalogError, open_catalog


def add_catalog_argument(p: argparse.ArgumentParser) -> None:
    """The CATALOG argument of a command that reads one catalog."""
    p.add_argument("catalog", type=Path, help="catalog DuckDB file")


def add_rows_format(p: argparse.ArgumentParser, help_text: str) -> None:
    """The --format option of a command that prints rows."""
    p.add_argument("--format", choices=("auto", "table", "tsv", "csv", "json"), default="auto", help=help_text)


def rows_format(chosen: str) -> str:
    """The format to print rows in: 'auto' is a table on a terminal and TSV into a pipe."""
    return chosen if chosen != "auto" else ("table" if sys.stdout.isatty() else "tsv")


def open_read_only(path: Path) -> duckdb.DuckDBPyConnection | None:
    """The catalog at ``path`` opened read-only, or None once the reason it cannot be is printed."""
    try:
        return open_catalog(path, read_only=True)
    except CatalogError as exc:
        err(f"npu-triage: {exc}")
        return None
