"""`npu-triage query CATALOG "SQL" [--format auto|table|tsv|csv|json]`: read-only SQL over a catalog."""

from __future__ import annotations

import argparse

import duckdb

from analyzer.cli.catalog_args import add_catalog_argument, add_rows_format, open_read_only, rows_format
from analyzer.cli.console import err, out
from analyzer.errors import first_line
from analyzer.report.rows import rows_csv, rows_json, rows_rich, rows_tsv
from analyzer.runs.catalog import read_only_query


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("query", help="run read-only SQL over a catalog and print the rows")
    add_catalog_argument(p)
    p.add_argument("sql", help='one SQL query, e.g. "SELECT code, count(*) FROM findings GROUP BY 1"')
    add_rows_format(p, "auto (default): a table on a terminal, TSV into a pipe")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    con = open_read_only(args.catalog)
    if con is None:
        return 2
    try:
        table = read_only_query(con, args.sql)
    except duckdb.Error as exc:
        err(f"npu-triage query: {first_line(exc)}")
        return 2
    finally:
        con.close()
    fmt = rows_format(args.format)
    if fmt == "tsv":
        out.file.write(rows_tsv(table))
    elif fmt == "csv":
        out.print(rows_csv(table), markup=False, end="")
    elif fmt == "json":
        out.print(rows_json(table), markup=False, end="")
    else:
        out.print(rows_rich(table))
    return 0
