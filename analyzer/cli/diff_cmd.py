"""`npu-triage diff BASE NEW`: compare two runs (export paths or CATALOG.duckdb:RUN_ID), noise-aware.

Two runs of different models (metrics/model_identity.py) are refused unless --force, which then puts
the warning first in every output.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import analyzer
from analyzer.api.diffs import Diff, DifferentModels
from analyzer.cli.console import err, out
from analyzer.cli.file_output import file_outputs, is_stdout, write_file_output, write_html_output
from analyzer.cli.output_paths import check_outputs, exports_read
from analyzer.cli.report_options import add_self_contained
from analyzer.cli.usage import UsageError
from analyzer.report.diff_html import render_diff_html
from analyzer.report.diff_markdown import render_diff_markdown
from analyzer.report.diff_terminal import diff_renderable, diff_summary_lines, diff_tsv
from analyzer.report.job_diff_text import job_diff_lines


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("diff", help="compare two runs: per-op-type and per-op deltas beyond run-to-run noise")
    p.add_argument("base", help="base run: an export folder, or CATALOG.duckdb:RUN_ID")
    p.add_argument("new", help="new run: an export folder, or CATALOG.duckdb:RUN_ID")
    p.add_argument("--json", type=Path, help="write the diff as JSON")
    p.add_argument("--markdown", type=Path, help="write the diff as Markdown")
    p.add_argument("--html", type=Path, help="write the diff as an HTML page with a waterfall chart")
    add_self_contained(p)
    p.add_argument(
        "--fail-on-regression",
        type=float,
        metavar="PCT",
        help="exit 1 when the step or an op type slowed by more than PCT percent beyond noise",
    )
    p.add_argument("--rules", type=Path, help="rules folder for export paths (default: the built-in rules)")
    p.add_argument(
        "--force",
        action="store_true",
        help="compare even when the two runs are of different models (the diff then says so loudly)",
    )
    p.set_defaults(func=run)


def _check(args: argparse.Namespace) -> None:
    """The output files and --fail-on-regression, before any work."""
    pct = args.fail_on_regression
    if pct is not None and not (math.isfinite(pct) and pct >= 0):
        raise UsageError(f"--fail-on-regression {pct}: give a percentage of 0 or more")
    outputs = file_outputs({f"--{o}": getattr(args, o) for o in ("json", "markdown", "html")})
    check_outputs(outputs, exports_read([Path(args.base), Path(args.new)]))


def _stdout_taken(args: argparse.Namespace) -> bool:
    """An output file is '-': stdout carries that file's text alone, everything else goes to stderr."""
    return any(is_stdout(getattr(args, o)) for o in ("json", "markdown", "html"))


def _run_job_diff(args: argparse.Namespace, found: Diff) -> int:
    """Two job folders: the job step time, per rank and per link (analyzer/job/job_diff.py)."""
    for line in job_diff_lines(found.job_diff):
        if _stdout_taken(args):  # stdout carries the JSON alone
            err(line)
        else:
            out.print(line, markup=False)
    if args.json:
        write_file_output(args.json, json.dumps(found.to_dict(), indent=2, sort_keys=True) + "\n")
    pct = args.fail_on_regression
    return 1 if pct is not None and found.regressions(pct) else 0


def run(args: argparse.Namespace) -> int:
    _check(args)
    try:
        found = analyzer.diff(args.base, args.new, rules_dir=args.rules, force=args.force)
    except DifferentModels as exc:
        for note in exc.notes:
            err(f"npu-triage: note: {note}")
        err(f"npu-triage diff: {exc}")
        return 2
    if found.job is not None:
        return _run_job_diff(args, found)
    if found.different_models:
        err(f"npu-triage: warning: {found.run_diff.notes[0]}")
    pct = args.fail_on_regression
    _print_diff(found.run_diff, pct, args)
    _write_files(found, pct, args)
    return 1 if pct is not None and found.regressions(pct) else 0


def _print_diff(diff, pct: float | None, args: argparse.Namespace) -> None:
    """On a terminal the tables; into a pipe the op types as TSV (unless an output file is '-': stdout then
    carries that file alone) and the lines about the whole run on stderr."""
    if sys.stdout.isatty() and not _stdout_taken(args):
        out.print(diff_renderable(diff, pct))
        return
    if not _stdout_taken(args):
        out.file.write(diff_tsv(diff))
    for line in diff_summary_lines(diff, pct):
        err(line)


def _write_files(found: Diff, pct: float | None, args: argparse.Namespace) -> None:
    diff = found.run_diff
    if args.json:
        write_file_output(args.json, json.dumps(found.to_dict(pct), indent=2) + "\n")
    if args.markdown:
        write_file_output(args.markdown, render_diff_markdown(diff, pct))
    if args.html:
        write_html_output(args.html, lambda src: render_diff_html(diff, pct, src), args.self_contained)
