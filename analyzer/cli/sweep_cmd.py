"""`npu-triage sweep RUN:bs=8 RUN:bs=16 ...` or `--catalog FILE [--model NAME]`: batch-size scaling and verdict."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analyzer.cli.console import err, out
from analyzer.cli.file_output import file_outputs, is_stdout, write_html_output
from analyzer.cli.output_paths import check_outputs, exports_read
from analyzer.cli.report_options import add_self_contained
from analyzer.metrics.sweep import create_scaling_views, scaling_tables
from analyzer.report.rows import rows_tsv
from analyzer.report.sweep_page import render_sweep_html, verdict_lines
from analyzer.report.sweep_terminal import sweep_table
from analyzer.runs.sources import memory_catalog
from analyzer.runs.sweep_inputs import check_sweep_specs, load_sweep_catalog, load_sweep_paths
from analyzer.runs.work import WorkSettings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="batch-size scaling: busy ratio, latency and throughput against batch size")
    p.add_argument("runs", nargs="*", help="exports with their batch size, as PATH:bs=N")
    p.add_argument("--catalog", type=Path, help="take the runs (with a batch size) from a catalog instead")
    p.add_argument("--model", help="only this model's runs (with --catalog)")
    p.add_argument("--html", type=Path, help="write the sweep page (charts and table)")
    add_self_contained(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if bool(args.runs) == bool(args.catalog):
        err("npu-triage sweep: give either PATH:bs=N runs or --catalog FILE")
        return 2
    specs = check_sweep_specs(args.runs)
    inputs = [Path(path) for path, _ in specs]
    check_outputs(file_outputs({"--html": args.html}), exports_read(inputs))
    con = memory_catalog()
    if args.catalog:
        if not args.catalog.is_file():
            err(f"npu-triage: {args.catalog}: no such catalog file")
            return 2
        load_sweep_catalog(con, args.catalog, args.model)
    else:
        load_sweep_paths(con, args.runs, WorkSettings(diagnose=False, model_name=args.model))
    create_scaling_views(con)
    rows, verdict = scaling_tables(con, args.model if args.catalog else None)
    con.close()
    if not rows.num_rows:
        err("npu-triage sweep: no run with a batch size (label them PATH:bs=N)")
        return 2
    _print_sweep(rows, verdict, args)
    if args.html:
        write_html_output(args.html, lambda src: render_sweep_html(rows, verdict, src), args.self_contained)
    return 0


def _print_sweep(rows, verdict, args: argparse.Namespace) -> None:
    """On a terminal the table and verdicts; into a pipe the rows as TSV with full run ids (unless the page
    goes to stdout: `--html -`) and the verdicts on stderr."""
    if sys.stdout.isatty() and not is_stdout(args.html):
        out.print(sweep_table(rows.drop_columns(["run_id"])))
        for line in verdict_lines(verdict):
            out.print(line, markup=False)
        return
    if not is_stdout(args.html):
        out.file.write(rows_tsv(rows))
    for line in verdict_lines(verdict):
        err(line)
