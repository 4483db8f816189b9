"""`npu-triage ingest PATH --db FILE.duckdb [--parquet DIR]`: read exports into the normalized tables."""

from __future__ import annotations

import argparse
from pathlib import Path

import analyzer
from analyzer.cli.console import err, out
from analyzer.cli.nothing_usable import nothing_usable
from analyzer.cli.output_paths import DATABASE, FOLDER, Output, check_outputs, scan_input
from analyzer.cli.partial_input import add_allow_partial, partial_input_code
from analyzer.report.run_lines import problem_lines, run_lines


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ingest", help="read exports into the normalized tables (DuckDB file and/or Parquet)")
    p.add_argument("path", type=Path, help="an export folder, or any folder above several")
    p.add_argument("--db", type=Path, help="DuckDB file to write (re-ingesting a run replaces its rows)")
    p.add_argument("--parquet", type=Path, help="folder to write one Parquet file per table into")
    add_allow_partial(p, "the ingest_problems table and stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    outputs = [Output("--db", args.db, DATABASE)] if args.db else []
    outputs += [Output("--parquet", args.parquet, FOLDER)] if args.parquet else []
    scanned = scan_input(args.path)  # the tree is walked once: for the output check and for the ingest
    check_outputs(outputs, scanned[0] if scanned else [])
    trace = analyzer.load(args.path, scanned=scanned)
    jobs = trace.jobs
    problems = [*trace.problems, *(p for j in jobs for p in j.problems)]
    for loaded in jobs:
        ranks = len(loaded.job.ranks)
        out.print(f"job {loaded.job.job_id}: {ranks} ranks; {loaded.group_note}", markup=False)
    for line in run_lines(trace.con, trace.run_ids):
        out.print(line, markup=False)
    shown = problem_lines(problems)
    for line in shown:
        err(line)
    usable = trace.usable_run_ids()
    if args.db:
        trace.save(args.db)
        out.print(f"wrote {len(trace.run_ids)} run(s) and {len(jobs)} job(s) to {args.db}", markup=False)
    if args.parquet:
        trace.save_parquet(args.parquet)
        out.print(f"wrote Parquet tables to {args.parquet}", markup=False)
    if not usable and not jobs:
        err(nothing_usable(bool(shown)))
        return 2
    return partial_input_code(problems, args.allow_partial, "the tables cover")
