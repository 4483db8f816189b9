"""`npu-triage export CATALOG --parquet DIR`: write every catalog table as a Parquet file."""

from __future__ import annotations

import argparse
from pathlib import Path

from analyzer.cli.console import err, out
from analyzer.cli.output_paths import FOLDER, Output, check_outputs
from analyzer.runs.catalog import CatalogError, export_parquet, open_catalog


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write a catalog's tables as Parquet files")
    p.add_argument("catalog", type=Path, help="catalog DuckDB file")
    p.add_argument("--parquet", type=Path, required=True, help="folder to write <table>.parquet files into")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_outputs([Output("--parquet", args.parquet, FOLDER)])
    try:
        con = open_catalog(args.catalog, read_only=True)
    except CatalogError as exc:
        err(f"npu-triage: {exc}")
        return 2
    try:
        written = export_parquet(con, args.parquet)
    finally:
        con.close()
    out.print(f"wrote {len(written)} Parquet file(s) to {args.parquet}", markup=False)
    return 0
