"""`npu-triage export CATALOG --parquet DIR`: write every catalog table as a Parquet file."""

from __future__ import annotations

import argparse
from pathlib import Path

from analyzer.cli.catalog_args import add_catalog_argument, open_read_only
from analyzer.cli.console import out
from analyzer.cli.output_paths import FOLDER, Output, check_outputs
from analyzer.runs.catalog import export_parquet


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write a catalog's tables as Parquet files")
    add_catalog_argument(p)
    p.add_argument("--parquet", type=Path, required=True, help="folder to write <table>.parquet files into")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_outputs([Output("--parquet", args.parquet, FOLDER)])
    con = open_read_only(args.catalog)
    if con is None:
        return 2
    try:
        written = export_parquet(con, args.parquet)
    finally:
        con.close()
    out.print(f"wrote {len(written)} Parquet file(s) to {args.parquet}", markup=False)
    return 0
