"""`npu-triage batch ROOT --catalog FILE.duckdb [--jobs N] [--executor dask]`: every export of a tree into a catalog."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import duckdb

import analyzer
from analyzer.cli.archive_limits import add_limit_options, limits_from
from analyzer.cli.console import err, out
from analyzer.cli.output_paths import CATALOG, Output, check_outputs, scan_input
from analyzer.cli.progress import run_progress
from analyzer.cli.spread_options import add_scheduler_option, executor_for
from analyzer.cli.usage import UsageError
from analyzer.ingest.metadata.discover import absent_reason, printable
from analyzer.ingest.metadata.no_export_note import no_export_note
from analyzer.ingest.model import IngestError
from analyzer.runs.batch import BatchOutcome
from analyzer.runs.catalog import CatalogError, open_catalog
from analyzer.runs.dask_executor import ExecutorError
from analyzer.runs.executor import default_jobs
from analyzer.runs.work import INFRASTRUCTURE


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("batch", help="analyse every export under a folder or inside archives into a catalog")
    p.add_argument("root", type=Path, help="a folder tree, or a .zip/.tar/.tar.gz/.tgz archive")
    p.add_argument("--catalog", type=Path, required=True, help="catalog DuckDB file (created or extended)")
    p.add_argument("--jobs", type=int, default=default_jobs(), help="worker processes (default: CPU count)")
    add_executor_options(p)
    add_limit_options(p)
    p.add_argument("--rules", type=Path, help="rules folder (default: the built-in rules)")
    p.add_argument("--no-diagnose", action="store_true", help="catalog metrics only, run no rules")
    p.add_argument("--verbose", action="store_true", help="print a line per run as it is committed")
    p.set_defaults(func=run)


def add_executor_options(p: argparse.ArgumentParser) -> None:
    """--executor and --scheduler of a batch."""
    p.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="local: a process pool of --jobs workers (default); dask: a Dask cluster, local or at --scheduler "
        "(needs pip install 'npu-triage[dask]')",
    )
    add_scheduler_option(p)


def run(args: argparse.Namespace) -> int:
    if not args.root.exists():
        raise IngestError(absent_reason(args.root), printable(args.root))
    if args.jobs < 1:
        err("npu-triage: --jobs must be at least 1")
        return 2
    # The tree is walked once: the outputs are checked against it, the batch planned on it.
    scanned = scan_input(args.root) if args.root.is_dir() else None
    check_outputs([Output("--catalog", args.catalog, CATALOG)], scanned[0] if scanned else [])
    limits = limits_from(args)
    with run_progress("analysing runs", 0) as bar:

        def on_start(n: int) -> None:
            bar.phase("analysing runs", n)

        def on_done(task, status: str) -> None:
            bar.done(f"{status}: {task.label}")
            if status == "catalogued" and not args.no_diagnose:
                _say_logs(task)
            if args.verbose:
                out.print(f"{status}: {task.label}", markup=False)
                out.file.flush()

        new_catalog = not args.catalog.exists()
        con = _open_catalog(args.catalog)  # a wrong catalog is the user's mistake: said before any work
        try:
            executor = executor_for(args.executor, args.scheduler, args.jobs)
            outcome = analyzer.batch(
                args.root,
                con,
                rules_dir=args.rules,
                diagnose=not args.no_diagnose,
                executor=executor,
                on_start=on_start,
                on_done=on_done,
                limits=limits,
                scanned=scanned,
            )
        except ExecutorError as exc:
            con.close()
            if new_catalog:  # an executor that cannot start leaves no new catalog behind
                for path in (args.catalog, args.catalog.with_name(args.catalog.name + ".wal")):
                    path.unlink(missing_ok=True)
            err(f"npu-triage: {exc}")
            return 2
    return _report(outcome, args.catalog, args.root)


def _say_logs(task) -> None:
    """On stderr, each log collection found beside a catalogued export (read by its worker, logs/beside.py)."""
    from analyzer.logs.beside import logs_beside

    export = Path(task.export_path)
    for found in logs_beside(export):
        where = os.path.relpath(found.root, export.resolve()) + (" (its own files only)" if found.loose else "")
        err(f"npu-triage: logs found beside {task.label}: {where} (its findings in the catalog's log_findings)")


def _open_catalog(path: Path) -> duckdb.DuckDBPyConnection:
    """The catalog, opened (created when new) and checked once."""
    try:
        return open_catalog(path)
    except CatalogError as exc:
        raise UsageError(f"--catalog {exc}") from exc


def _report(outcome: BatchOutcome, catalog: Path, root: Path | None = None) -> int:
    """The summary line, a line per copy, per failure, per folder not read and per run catalogued with lost
    input (found now or by an earlier batch: a rerun reports the same state and exits the same);
    exit 2 when nothing usable was found, 3 when part of the tree or of a run was lost, else 0."""
    failed = sorted([*outcome.failed, *outcome.failed_before], key=lambda row: (row["path"], row["message"]))
    earlier = f" ({len(outcome.failed_before)} by an earlier batch)" if outcome.failed_before else ""
    # a known rank judged again with its job is no new run: said apart, so that the counts add up to the tree's runs
    again = f", {len(outcome.rejudged)} known job rank(s) re-judged with their job" if outcome.rejudged else ""
    # the line counts exports; the catalog holds a run per device, which its count says when they differ
    caught = len(outcome.catalogued)
    what = (
        f"{caught} run(s) catalogued"
        if outcome.catalogued_runs == caught
        else f"{caught} export(s) catalogued as {outcome.catalogued_runs} runs (a run per device)"
    )
    out.print(
        f"{what}{again}, {len(outcome.skipped)} already in the catalog "
        f"(skipped), {len(failed)} failure(s) recorded{earlier} in {catalog}; "
        f"{len(outcome.copies)} identical cop{'y' if len(outcome.copies) == 1 else 'ies'} of another input",
        markup=False,
    )
    for label, original in outcome.copies:
        out.print(f"copy: {label} is identical to {original}, analysed once (the catalog's copies)", markup=False)
    for row in failed:
        err(f"failed: {row['path']}: {row['message']}")
    for row in outcome.unreadable:
        err(f"error: {row['path']}: {row['message']} (recorded in the catalog's failures)")
    for label, lost, table in sorted(outcome.partial):
        more = f"; {len(lost) - 3} more" if len(lost) > 3 else ""
        err(f"error: {label}: catalogued with input lost: {'; '.join(lost[:3])}{more} (the catalog's {table})")
    if outcome.jobs:
        out.print(f"{len(outcome.jobs)} job(s) catalogued: {', '.join(outcome.jobs)}", markup=False)
    if outcome.job_parts:
        out.print(
            f"{len(outcome.job_parts)} rank export(s) of a job hold summaries only and are not runs of their own "
            f"(first: {outcome.job_parts[0]}); `npu-triage diagnose` on the job's folder judges the job",
            markup=False,
        )
    if not outcome.catalogued and not outcome.known_usable and not outcome.job_parts:
        hint = no_export_note(root) if root is not None else ""
        err(f"npu-triage: no usable run was found{hint}")
        return 2
    if any(row["message"].startswith(INFRASTRUCTURE) for row in outcome.failed):
        err("npu-triage: the machinery lost some exports (lines above), tried again by the next batch; exit code 3")
        return 3
    if outcome.unreadable or outcome.partial:
        err("npu-triage: part of the input was lost (lines above); exit code 3")
        return 3
    return 0
