"""`npu-triage diff BASE NEW`: compare two runs (export paths or CATALOG.duckdb:RUN_ID), noise-aware.

Two runs of different models (metrics/model_identity.py) are refused unless --force, which then puts
the warning first in every output.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace
from pathlib import Path

from analyzer.cli.console import err, out
from analyzer.cli.file_output import file_outputs, is_stdout, write_file_output, write_html_output
from analyzer.cli.output_paths import check_outputs, exports_read
from analyzer.cli.report_options import add_self_contained
from analyzer.cli.usage import UsageError
from analyzer.diff.compare import diff_runs
from analyzer.job.grouping import Job
from analyzer.job.job_diff import diff_jobs, read_side, the_job
from analyzer.metrics.model_identity import load_identities, model_difference
from analyzer.report.diff_html import render_diff_html
from analyzer.report.diff_json import diff_to_dict
from analyzer.report.diff_markdown import render_diff_markdown
from analyzer.report.diff_terminal import diff_renderable, diff_summary_lines, diff_tsv
from analyzer.report.job_diff_text import job_diff_dict, job_diff_lines
from analyzer.runs.sources import load_side, memory_catalog
from analyzer.runs.work import WorkSettings


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


def _run_job_diff(args: argparse.Namespace, base: Job, new: Job) -> int:
    """Two job folders: the job step time, per rank and per link (analyzer/job/job_diff.py)."""
    diff = diff_jobs(read_side(base, str(args.base)), read_side(new, str(args.new)))
    for line in job_diff_lines(diff):
        if _stdout_taken(args):  # stdout carries the JSON alone
            err(line)
        else:
            out.print(line, markup=False)
    if args.json:
        write_file_output(args.json, json.dumps(job_diff_dict(diff), indent=2, sort_keys=True) + "\n")
    pct, delta = args.fail_on_regression, diff.step_delta_pct
    return 1 if pct is not None and delta is not None and delta > pct else 0


def run(args: argparse.Namespace) -> int:
    _check(args)
    base_job, new_job = (the_job(Path(p)) for p in (args.base, args.new))
    if base_job and new_job:
        return _run_job_diff(args, base_job, new_job)
    settings = WorkSettings(rules_dir=str(args.rules) if args.rules else None, diagnose=True)
    con = memory_catalog()
    base, notes_b = load_side(con, args.base, settings)
    new, notes_n = load_side(con, args.new, settings)
    base_id, new_id = load_identities(con, [base, new])
    different = model_difference(base_id, new_id)
    if different and not args.force:
        con.close()
        for note in notes_b + notes_n:
            err(f"npu-triage: note: {note}")
        err(
            f"npu-triage diff: refusing to compare {base} with {new}: they are different models: {different}. "
            "A diff of two models says nothing about either; add --force to compare them anyway"
        )
        return 2
    diff = diff_runs(con, base, new)
    con.close()
    warning = [f"DIFFERENT MODELS compared (--force): {different}"] if different else []
    diff = replace(diff, notes=(*warning, *notes_b, *notes_n, *diff.notes))
    if different:
        err(f"npu-triage: warning: {warning[0]}")
    pct = args.fail_on_regression
    _print_diff(diff, pct, args)
    _write_files(diff, pct, args)
    return 1 if pct is not None and diff.regressions(pct) else 0


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


def _write_files(diff, pct: float | None, args: argparse.Namespace) -> None:
    if args.json:
        write_file_output(args.json, json.dumps(diff_to_dict(diff, pct), indent=2) + "\n")
    if args.markdown:
        write_file_output(args.markdown, render_diff_markdown(diff, pct))
    if args.html:
        write_html_output(args.html, lambda src: render_diff_html(diff, pct, src), args.self_contained)
