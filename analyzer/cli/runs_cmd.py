"""`npu-triage runs CATALOG [--jobs]`: list the catalogued runs, or jobs, with their top finding."""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path

import duckdb
from rich.table import Table

from analyzer.cli.catalog_args import add_rows_format, open_read_only, rows_format
from analyzer.cli.console import err, out
from analyzer.report.catalog_doc import render_catalog_markdown
from analyzer.report.rows import rows_csv, rows_json, rows_tsv
from analyzer.runs.catalog import list_runs
from analyzer.runs.job_catalog import list_jobs


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="list the runs of a catalog with their top finding")
    p.add_argument("catalog", type=Path, nargs="?", help="catalog DuckDB file written by `npu-triage batch`")
    p.add_argument("--jobs", action="store_true", help="list the catalogued multi-rank jobs instead of the runs")
    p.add_argument("--schema-markdown", action="store_true", help="print the catalog schema as Markdown and exit")
    add_rows_format(p, "auto (default): a table on a terminal, TSV into a pipe; full run ids in every format but table")
    p.set_defaults(func=run)


_ROW_TEXT = {"tsv": rows_tsv, "csv": rows_csv, "json": rows_json}  # every --format but a terminal table

# The terminal table's columns per listing, declared in listing_columns.toml.
_COLUMNS = tomllib.loads(Path(__file__).with_name("listing_columns.toml").read_text(encoding="utf-8"))


def run(args: argparse.Namespace) -> int:
    if args.schema_markdown:
        out.print(render_catalog_markdown(), markup=False, end="")
        return 0
    if args.catalog is None:
        err("npu-triage runs: a catalog file is needed")
        return 2
    con = open_read_only(args.catalog)
    if con is None:
        return 2
    listed = list_jobs(con) if args.jobs else list_runs(con)
    notes = _notes(con, args.catalog, args.jobs, sum(listed.column("partial").to_pylist()))
    con.close()
    fmt = rows_format(args.format)
    if fmt != "table":
        out.file.write(_ROW_TEXT[fmt](listed))
        for line in notes:
            err(line)
        return 0
    rows = listed.to_pylist()
    what = "job" if args.jobs else "run"
    columns = _COLUMNS[f"{what}s"]
    table = Table(title=f"{len(rows)} {what}(s) in {args.catalog}")
    for heading, _, _ in columns:
        table.add_column(heading, overflow="ellipsis")  # words wrap whole; one too long is cut
    for r in rows:
        table.add_row(*(_cell(r, key, how) for _, key, how in columns))
    out.print(table)
    for line in notes:
        out.print(line, markup=False)
    return 0


def _notes(con: duckdb.DuckDBPyConnection, catalog: Path, jobs: bool, partial: int) -> list[str]:
    """The lines under the listing: how many listed runs (jobs) lost input, and for runs how many inputs failed
    and how many were copies, each with the query that lists them."""
    what = "job" if jobs else "run"
    counts = [(f"partial {what}(s), with input lost", partial, f"{what}_problems WHERE severity = 'error'")]
    if not jobs:
        counts += [
            ("failure(s)", _row_count(con, "failures"), "failures"),
            ("input(s) identical to a catalogued one", _row_count(con, "copies"), "copies"),
        ]
    return [f'{n} {text}: npu-triage query {catalog} "SELECT * FROM {query}"' for text, n, query in counts if n]


def _row_count(con: duckdb.DuckDBPyConnection, table: str) -> int:
    return con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]


def _cell(row: dict, key: str, how: str) -> str:
    """One cell of the terminal table (``how`` as listing_columns.toml says)."""
    value = row[key]
    if how == "finding":
        return f"{row['top_code']} {row['top_severity']}: {value} ({row['top_subject']})" if row["top_code"] else "-"
    if how.startswith("flag:"):
        return how.removeprefix("flag:") if value else ""
    if how == "?":
        return value or "?"
    if value is None:
        return ""
    return format(value / 1000, ".2f") if how == "ms" else format(value, how)
