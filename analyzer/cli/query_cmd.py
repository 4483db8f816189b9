"""`npu-triage query CATALOG "SQL" [--format auto|table|tsv|csv|json]`: read-only SQL over a catalog."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb

from analyzer.cli.console import err, out
from analyzer.report.rows import rows_csv, rows_json, rows_rich, rows_tsv
from analyzer.runs.catalog import CatalogError, open_catalog, read_only_query


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("query", help="run read-only SQL over a catalog and print the rows")
    p.add_argument("catalog", type=Path, help="catalog DuckDB file")
    p.add_argument("sql", help='one SQL query, e.g. "SELECT code, count(*) FROM findings GROUP BY 1"')
    p.add_argument(
        "--format",
        choices=("auto", "table", "tsv", "csv", "json"),
        default="auto",
        help="auto (default): a table on a terminal, TSV into a pipe",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        con = open_catalog(args.catalog, read_only=True)
    except CatalogError as exc:
        err(f"npu-triage: {exc}")
        return 2
    try:
        table = read_only_query(con, args.sql)
    except duckdb.Error as exc:
        err(f"npu-triage query: {str(exc).splitlines()[0]}")
        return 2
    finally:
        con.close()
    fmt = args.format if args.format != "auto" else ("table" if sys.stdout.isatty() else "tsv")
    if fmt == "tsv":
        out.file.write(rows_tsv(table))
    elif fmt == "csv":
        out.print(rows_csv(table), markup=False, end="")
    elif fmt == "json":
        out.print(rows_json(table), markup=False, end="")
    else:
        out.print(rows_rich(table))
    return 0
