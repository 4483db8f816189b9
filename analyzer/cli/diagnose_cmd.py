"""`npu-triage diagnose PATH`: ingest or reuse a DB, run the rules, print and write reports."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import duckdb

from analyzer.atomic_files import write_text_atomically
from analyzer.cli.console import err, out
from analyzer.cli.output_paths import DATABASE, FOLDER, Output, check_outputs, exports_read
from analyzer.cli.partial_input import add_allow_partial, partial_input_code
from analyzer.cli.process_end import keep_until_exit
from analyzer.cli.rule_options import (
    UsageError,
    add_rule_options,
    load_checked_rules,
    rule_overrides,
)
from analyzer.diagnosis import diagnose, diagnose_runs
from analyzer.duckdb_connect import is_duckdb_file
from analyzer.ingest import load_export
from analyzer.ingest.database import load_duckdb, save_duckdb
from analyzer.ingest.loader import usable_run_ids
from analyzer.ingest.memory_budget import report_budget
from analyzer.report.json_export import render_json
from analyzer.report.markdown import render_markdown
from analyzer.report.model import Diagnosis
from analyzer.report.output_files import run_folder
from analyzer.report.run_lines import problem_lines
from analyzer.report.terminal import print_diagnosis
from analyzer.rule_engine.model import SEVERITY_RANK, Rule
from analyzer.rule_engine.params import ParamError
from analyzer.rule_engine.timeline_use import unread_timeline_kinds

FORMATS = ("json", "md", "html")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("diagnose", help="run the rules over an export and write a ranked diagnosis")
    p.add_argument("path", type=Path, nargs="?", help="an export folder (or a folder above several)")
    p.add_argument("--db", type=Path, help="DuckDB file: reused when no PATH is given, else written by ingest")
    p.add_argument("--out", type=Path, default=Path("reports"), help="output folder (default: reports/)")
    p.add_argument("--format", default="json,md,html", help="comma-separated: json, md, html (default: all three)")
    p.add_argument(
        "--fail-on",
        choices=("warning", "critical"),
        help="exit 1 when a finding has this severity or worse",
    )
    add_allow_partial(p, "the reports")
    add_rule_options(p)
    p.set_defaults(func=run)


def _formats(text: str) -> list[str]:
    formats = [f.strip() for f in text.split(",") if f.strip()]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise UsageError(f"--format {text!r}: choose from {', '.join(FORMATS)}")
    return formats


def _connection(args: argparse.Namespace, rules: list[Rule]) -> tuple[duckdb.DuckDBPyConnection, list[str], list]:
    if args.path is None:
        if not args.db or not args.db.is_file():
            raise UsageError("give an export PATH, or --db FILE.duckdb of an earlier `npu-triage ingest`")
        if not is_duckdb_file(args.db):
            raise UsageError(f"--db {args.db}: is not a DuckDB file of `npu-triage ingest`")
        con = load_duckdb(args.db)
        return (
            con,
            [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()],
            [],
        )
    # The timeline kinds no rule reads are not stored, unless --db is to hold every table.
    ingested = load_export(args.path, left_out_kinds=frozenset() if args.db else unread_timeline_kinds(rules))
    if args.db:
        save_duckdb(ingested.con, args.db, ingested.run_ids)
    return ingested.con, ingested.run_ids, ingested.problems


def _check_outputs(args: argparse.Namespace) -> None:
    """Every output path, before any work: --out and the run folders under it, and --db when written."""
    sources = exports_read([args.path])
    outputs = [Output("--out", args.out, FOLDER)]
    outputs += [Output("--out", run_folder(args.out, s.source_id), FOLDER) for s in sources]
    if args.db and args.path is not None:
        outputs.append(Output("--db", args.db, DATABASE))
    check_outputs(outputs, sources)


def _write(d: Diagnosis, con: duckdb.DuckDBPyConnection, folder: Path, formats: list[str]) -> Iterator[Path]:
    """Write the reports one by one, yielding each as it is written (an output failure then names
    its file after the files already written)."""
    if "json" in formats:
        yield write_text_atomically(folder / "diagnosis.json", render_json(d))
    if "md" in formats:
        yield write_text_atomically(folder / "diagnosis.md", render_markdown(d))
    if "html" in formats:
        # DuckDB's budget gives way first: plotly and polars, loaded only when HTML is asked for,
        # take about 65 MiB as they load (memory_budget.report_budget)
        with report_budget(con):
            from analyzer.report.html import render_html

            page = render_html(d, con)
        yield write_text_atomically(folder / "report.html", page)


def _emit(d: Diagnosis, con: duckdb.DuckDBPyConnection, out_dir: Path, formats: list[str]) -> int:
    """Print one diagnosis and write its reports; returns its worst severity rank (-1: no finding)."""
    print_diagnosis(d, out)
    for path in _write(d, con, run_folder(out_dir, d.run_id), formats):
        out.print(f"wrote {path}", markup=False)
    return max((SEVERITY_RANK[f.severity] for f in d.findings), default=-1)


def run(args: argparse.Namespace) -> int:
    try:
        formats = _formats(args.format)
        _check_outputs(args)
        rules = load_checked_rules(args.rules)
        params = rule_overrides(args, rules)
        con, run_ids, problems = _connection(args, rules)
    except (UsageError, ParamError) as exc:
        err(f"npu-triage: {exc}")
        return 2
    keep_until_exit(con)  # freed by the OS when the program ends, not table block by block
    usable = usable_run_ids(con, run_ids)  # runs with a device task that has a start and a duration
    for line in problem_lines(problems):
        err(line)
    if not usable:
        err("npu-triage: nothing usable was found: no device task could be read (problems above)")
        return 2
    worst = -1
    for run_id in usable:
        d = diagnose(con, run_id, rules, params, preview=args.preview)
        worst = max(worst, _emit(d, con, args.out, formats))
    several = diagnose_runs(con, usable, rules, params, preview=args.preview)
    if several is not None:  # rules comparing the runs (batch-size-scaling)
        worst = max(worst, _emit(several, con, args.out, formats))
    if args.fail_on and worst >= SEVERITY_RANK[args.fail_on]:
        return 1
    return partial_input_code(problems, args.allow_partial, "the diagnosis covers")
