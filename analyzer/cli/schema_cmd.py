"""`npu-triage schema [TABLE] [--markdown]`: print the normalized schema."""

from __future__ import annotations

import argparse

from analyzer.cli.console import err, out
from analyzer.ingest.schema import TABLES
from analyzer.report.schema_doc import render_schema_markdown, render_schema_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("schema", help="print the normalized table model")
    p.add_argument("table", nargs="?", help="one table only")
    p.add_argument("--markdown", action="store_true", help="Markdown (the docs page is generated this way)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.table and args.table not in TABLES:
        err(f"npu-triage: unknown table {args.table!r}; tables: {', '.join(TABLES)}")
        return 2
    names = [args.table] if args.table else list(TABLES)
    text = render_schema_markdown(names) if args.markdown else render_schema_text(names)
    out.print(text, markup=False, end="")
    return 0
