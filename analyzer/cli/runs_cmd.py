"""`npu-triage runs CATALOG [--jobs]`: list the catalogued runs, or jobs, with their top finding."""

from __future__ import annotations

import argparse
from pathlib import Path

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


def _fmt(value, spec: str) -> str:
    return "" if value is None else format(value, spec)


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
    failures = con.execute("SELECT count(*) FROM failures").fetchall()[0][0]
    con.close()
    fmt = rows_format(args.format)
    if args.jobs:
        return _print_jobs(listed, fmt, args.catalog)
    if fmt != "table":
        out.file.write(_ROW_TEXT[fmt](listed))
        if failures:
            err(f'{failures} failure(s): npu-triage query {args.catalog} "SELECT * FROM failures"')
        return 0
    rows = listed.to_pylist()
    table = Table(title=f"{len(rows)} run(s) in {args.catalog}")
    for name in ("run", "path", "CANN", "chip", "model", "bs", "tasks", "busy", "step p50 ms", "top finding"):
        table.add_column(name, overflow="fold")
    for r in rows:
        top = f"{r['top_code']} {r['top_severity']}: {r['top_title']} ({r['top_subject']})" if r["top_code"] else "-"
        table.add_row(
            r["run_id"],
            r["path"],
            r["cann_version"] or "?",
            r["chip"] or "?",
            r["model_name"] or "",
            _fmt(r["batch_size"], "d"),
            _fmt(r["task_count"], "d"),
            _fmt(r["busy_ratio"], ".0%"),
            _fmt(None if r["step_time_p50_us"] is None else r["step_time_p50_us"] / 1000, ".2f"),
            top,
        )
    out.print(table)
    if failures:
        out.print(f'{failures} failure(s): npu-triage query {args.catalog} "SELECT * FROM failures"', markup=False)
    return 0


def _print_jobs(listed, fmt: str, catalog: Path) -> int:
    """The jobs: a table on a terminal, else the rows in ``fmt``."""
    if fmt == "table":
        out.print(_jobs_table(listed.to_pylist(), catalog))
    else:
        out.file.write(_ROW_TEXT[fmt](listed))
    return 0


def _jobs_table(rows: list[dict], catalog: Path) -> Table:
    table = Table(title=f"{len(rows)} job(s) in {catalog}")
    for name in ("job", "path", "ranks", "summaries only", "steps", "job step ms", "spread ms", "top finding"):
        table.add_column(name, overflow="fold")
    for r in rows:
        top = f"{r['top_code']} {r['top_severity']}: {r['top_rule']} ({r['top_subject']})" if r["top_code"] else "-"
        table.add_row(
            r["job_id"],
            r["path"],
            _fmt(r["rank_count"], "d"),
            _fmt(r["summary_only_rank_count"], "d"),
            _fmt(r["step_count"], "d"),
            _fmt(None if r["job_step_us"] is None else r["job_step_us"] / 1000, ".2f"),
            _fmt(None if r["step_spread_us"] is None else r["step_spread_us"] / 1000, ".2f"),
            top,
        )
    return table
