"""`npu-triage diff BASE NEW`: compare two runs (export paths or CATALOG.duckdb:RUN_ID), noise-aware."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from analyzer.atomic_files import write_text_atomically
from analyzer.cli.console import err, out
from analyzer.cli.output_paths import FILE, Output, check_outputs, exports_read
from analyzer.cli.usage import UsageError
from analyzer.diff.compare import diff_runs
from analyzer.diff.sources import load_side, memory_catalog
from analyzer.report.diff_html import render_diff_html
from analyzer.report.diff_json import diff_to_dict
from analyzer.report.diff_markdown import render_diff_markdown
from analyzer.report.diff_terminal import diff_renderable
from analyzer.runs.work import WorkSettings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("diff", help="compare two runs: per-op-type and per-op deltas beyond run-to-run noise")
    p.add_argument("base", help="base run: an export folder, or CATALOG.duckdb:RUN_ID")
    p.add_argument("new", help="new run: an export folder, or CATALOG.duckdb:RUN_ID")
    p.add_argument("--json", type=Path, help="write the diff as JSON")
    p.add_argument("--markdown", type=Path, help="write the diff as Markdown")
    p.add_argument("--html", type=Path, help="write the diff as an HTML page with a waterfall chart")
    p.add_argument(
        "--fail-on-regression",
        type=float,
        metavar="PCT",
        help="exit 1 when the step or an op type slowed by more than PCT percent beyond noise",
    )
    p.add_argument("--rules", type=Path, help="rules folder for export paths (default: the built-in rules)")
    p.set_defaults(func=run)


def _check(args: argparse.Namespace) -> None:
    """The output files and --fail-on-regression, before any work."""
    pct = args.fail_on_regression
    if pct is not None and not (math.isfinite(pct) and pct >= 0):
        raise UsageError(f"--fail-on-regression {pct}: give a percentage of 0 or more")
    outputs = [Output(f"--{o}", getattr(args, o), FILE) for o in ("json", "markdown", "html") if getattr(args, o)]
    check_outputs(outputs, exports_read([Path(args.base), Path(args.new)]))


def run(args: argparse.Namespace) -> int:
    _check(args)
    settings = WorkSettings(rules_dir=str(args.rules) if args.rules else None, diagnose=True)
    con = memory_catalog()
    base, notes_b = load_side(con, args.base, settings)
    new, notes_n = load_side(con, args.new, settings)
    for note in notes_b + notes_n:
        err(f"npu-triage: note: {note}")
    diff = diff_runs(con, base, new)
    con.close()
    pct = args.fail_on_regression
    out.print(diff_renderable(diff, pct))
    if args.json:
        write_text_atomically(args.json, json.dumps(diff_to_dict(diff, pct), indent=2) + "\n")
    if args.markdown:
        write_text_atomically(args.markdown, render_diff_markdown(diff, pct))
    if args.html:
        write_text_atomically(args.html, render_diff_html(diff, pct))
    return 1 if pct is not None and diff.regressions(pct) else 0
