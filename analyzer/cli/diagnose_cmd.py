"""`npu-triage diagnose PATH`: ingest or reuse a DB, run the rules, print and write reports."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import analyzer
from analyzer.api import Trace
from analyzer.api.report_pool import start_workers
from analyzer.api.reports import report_all, report_job, report_settings
from analyzer.cli.console import err, out
from analyzer.cli.nothing_usable import nothing_usable
from analyzer.cli.output_paths import DATABASE, FOLDER, Output, ReadFolder, check_outputs, scan_input
from analyzer.cli.partial_input import add_allow_partial, partial_input_code
from analyzer.cli.progress import run_progress
from analyzer.cli.report_options import add_report_options, add_self_contained, report_formats
from analyzer.cli.rule_options import (
    add_rule_options,
    load_checked_rules,
    rule_overrides,
)
from analyzer.cli.spread_options import add_spread_options, check_spread_options, open_spread_executor
from analyzer.cli.usage import UsageError
from analyzer.diagnosis_model import Diagnosis
from analyzer.duckdb_connect import is_duckdb_file
from analyzer.ingest.metadata.discover import Scanned
from analyzer.job.explained import is_rank, rank_runs
from analyzer.report.job_terminal import print_job_diagnosis, rank_finding_lines
from analyzer.report.output_files import run_folder
from analyzer.report.run_lines import problem_lines
from analyzer.report.terminal import (
    fail_on_line,
    findings_tsv,
    print_diagnosis,
    print_overview,
    tripping_findings,
)
from analyzer.rule_engine.model import Rule
from analyzer.rule_engine.ranking import RANKING
from analyzer.rule_engine.timeline_use import unread_timeline_kinds


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "diagnose",
        help="run the rules over an export and write a ranked diagnosis",
        description="Run the rules over an export and write a ranked diagnosis. " + RANKING,
    )
    p.add_argument("path", type=Path, nargs="?", help="an export folder (or a folder above several)")
    p.add_argument("--db", type=Path, help="DuckDB file: reused when no PATH is given, else written by ingest")
    add_report_options(p)
    add_self_contained(p)
    p.add_argument("--quiet", action="store_true", help="print only errors, warnings and what tripped --fail-on")
    p.add_argument("--logs", type=Path, help="CANN log folder of the run: its host activities become gap causes")
    p.add_argument(
        "--log-utc-offset",
        help="UTC offset of the logs' wall clock (--logs, or found beside), e.g. +08:00 (default: the export's)",
    )
    add_allow_partial(p, "the reports")
    add_rule_options(p)
    add_spread_options(p)
    p.set_defaults(func=run)


def _load(args: argparse.Namespace, rules: list[Rule], scanned: Scanned | None = None, progress=None) -> Trace:
    """The trace `diagnose` works on: the runs' tables and the jobs' (``Trace.jobs``)."""
    if args.path is None:
        if not args.db or not args.db.is_file():
            raise UsageError("give an export PATH, or --db FILE.duckdb of an earlier `npu-triage ingest`")
        if not is_duckdb_file(args.db):
            raise UsageError(f"--db {args.db}: is not a DuckDB file of `npu-triage ingest`")
        return analyzer.open_database(args.db)
    # The timeline kinds no rule reads are not stored, unless --db is to hold every table.
    left_out = frozenset() if args.db else unread_timeline_kinds(rules)
    # the logs are read after the checks of their own (_check_logs, _found_logs)
    with open_spread_executor(args) as executor:  # its workers end once the exports are read
        trace = analyzer.load(
            args.path, left_out_kinds=left_out, scanned=scanned, progress=progress, logs=False, executor=executor
        )
    if args.db:  # the runs' tables and the jobs' (whose run_id is the job id)
        trace.save(args.db)
    return trace


def _job_pages(trace: Trace, rules: list[Rule], params, args, settings, workers) -> list:
    """Each job's diagnosis with what gives the files written for it (diagnosis.json, diagnosis.md, job.html:
    by one of ``workers`` when started, while the ranks are judged); its verdict is printed on a terminal,
    before the ranks'."""
    for loaded in trace.jobs:
        for line in problem_lines(loaded.problems, args.quiet):
            err(line)
    pages = []
    for d in analyzer.diagnose_jobs(trace, rule_set=rules, params=params, preview=args.preview):
        written = report_job(d, settings, trace=trace, workers=workers)
        if sys.stdout.isatty() and not args.quiet:
            print_job_diagnosis(d, out)
            for path in written():
                out.print(f"wrote {path}", markup=False)
        pages.append((d, written))
    return pages


def _check_outputs(args: argparse.Namespace) -> Scanned | None:
    """Every output path, before any work: --out and the run folders under it, and --db when written.
    Returns the scan of the input it was checked against, for the loader (the tree is walked once)."""
    scanned = scan_input(args.path)
    sources = scanned[0] if scanned else []
    outputs = [Output("--out", args.out, FOLDER)]
    outputs += [Output("--out", run_folder(args.out, s.source_id), FOLDER) for s in sources]
    if args.db and args.path is not None:
        outputs.append(Output("--db", args.db, DATABASE))
    check_outputs(outputs, sources)
    return scanned


def _print(
    pages: list[tuple[Diagnosis, list[Path]]],
    index: Path | None,
    args: argparse.Namespace,
    written: list[tuple[Diagnosis, list[Path]]] | None = None,
) -> None:
    """On a terminal, tables that fit it; into a pipe, only TSV of the findings (the rest on stderr). The line
    saying what was written counts ``written`` (default: ``pages``): on a terminal, the jobs' reports too."""
    diagnoses = [d for d, _ in pages]
    if args.quiet:
        return
    if not sys.stdout.isatty():
        out.file.write(findings_tsv(diagnoses))
        err(_wrote_line(pages, index, args.out))
        return
    if len(diagnoses) == 1:
        print_diagnosis(diagnoses[0], out)
        for path in pages[0][1]:
            out.print(f"wrote {path}", markup=False)
        return
    print_overview(diagnoses, out)
    out.print(_wrote_line(written or pages, index, args.out), markup=False)


def _print_job_ranks(job_pages: list, pages: list, args: argparse.Namespace) -> list:
    """On a terminal, the findings of each job's ranks one line per rule (not a line per rank); returns the
    pages of the runs that are no job's rank (printed as before)."""
    left = pages
    for job, _ in job_pages:
        ranks = frozenset(rank_runs(job))
        mine = [p for p in left if is_rank(p[0].run_id, ranks)]
        left = [p for p in left if not is_rank(p[0].run_id, ranks)]
        if mine and not args.quiet:
            for line in rank_finding_lines(job, [d for d, _ in mine]):
                out.print(line, markup=False)
    return left


def _wrote_line(pages: list[tuple[Diagnosis, list[Path]]], index: Path | None, out_dir: Path) -> str:
    files = sum(len(paths) for _, paths in pages)
    where = f"; open {index}" if index else ""
    return f"wrote {files} file(s) for {len(pages)} report(s) under {out_dir}{where}"


def _check_logs(args: argparse.Namespace) -> int | None:
    """The --logs folder and --log-utc-offset, checked before any work: the offset in minutes, or None."""
    from analyzer.cli.logs_cmd import check_log_input
    from analyzer.logs.clock import parse_offset

    if args.logs is not None:
        check_log_input(args.logs)
        check_outputs([Output("--out", args.out, FOLDER)], [ReadFolder(args.logs)])  # the logs' report goes there too
    if not args.log_utc_offset:
        return None
    return parse_offset(args.log_utc_offset)  # a ClockError names the offset (exit 2)


def _found_logs(args: argparse.Namespace, scanned: Scanned | None) -> list:
    """Without --logs: the log folders found inside or beside the exports (analyzer/logs/beside.py), each
    said on stderr and checked as an input that --out must stay out of, before any work."""
    from analyzer.logs.beside import found_logs

    if args.logs is not None:
        return []
    found = found_logs(Path(s.root) for s in scanned[0]) if scanned else []
    if not found and args.log_utc_offset:
        raise UsageError("--log-utc-offset: no logs to read (give --logs LOGDIR, or put the logs beside the export)")
    if found:
        check_outputs([Output("--out", args.out, FOLDER)], [ReadFolder(f.logdir) for f in found])
    for f in found:
        names = ", ".join(e.name for e in f.exports)
        err(f"npu-triage: logs found beside {names}: {f.logdir} (read as logs {f.run_id}; give --logs to choose)")
    return found


def _given_logs(args: argparse.Namespace) -> list:
    """The collections of --logs LOGDIR (analyzer/logs/collections.py), said on stderr when there are several."""
    from analyzer.logs.analysis import log_run_id
    from analyzer.logs.collections import find_collections

    if args.logs is None:
        return []
    collections = find_collections(args.logs, log_run_id(args.logs))
    if len(collections) > 1:
        names = ", ".join(c.run_id for c in collections)
        err(f"npu-triage: --logs {args.logs} holds {len(collections)} log collections, each read on its own: {names}")
    return collections


def _attach_logs(args, trace: Trace, offset: int | None, rules, params, formats, found) -> None:
    """--logs (or the logs found beside the exports): each log folder read into the trace, its host activities
    on its runs' timelines (gap causes of the time breakdown), its failed tasks linked to the runs' operators,
    its own report written beside the runs'."""
    from analyzer.cli.logs_cmd import write_log_report

    _given_logs(args)
    analyzer.attach_logs(trace, args.logs, utc_offset_min=offset, found=found)
    for logs in analyzer.diagnose_logs(trace, rule_set=rules, params=params, preview=args.preview):
        for problem in logs.problems:
            err(f"npu-triage: {problem}")
        marks, clock, note = (logs.summary[k] for k in ("timeline_marks", "clock", "timeline_note"))
        err(f"npu-triage: log collection {logs.run_id!r}: {marks} record(s) placed on the timeline; {clock}")
        if note:
            err(f"npu-triage: log collection {logs.run_id!r}: {note}")
        write_log_report(logs, run_folder(args.out, logs.run_id), formats)


def _judge(
    trace: Trace, usable: list[str], rules: list[Rule], params, args, settings, jobs: list[Diagnosis], workers
) -> list:
    """Each run's diagnosis (then the rules comparing them) with its reports written (by ``workers`` when
    started), under a progress bar on a terminal's stderr (``usable``: the trace's usable runs, counted by the
    bar); a rank's findings that a finding of its job (``jobs``) explains say so."""
    with run_progress("judging runs", len(usable)) as bar:
        diagnoses = analyzer.diagnose_runs(
            trace, jobs=jobs, rule_set=rules, params=params, preview=args.preview, on_run=bar.step
        )
        bar.phase("writing reports", len(diagnoses))
        return report_all(diagnoses, settings, trace=trace, on_report=bar.step, workers=workers)


def run(args: argparse.Namespace) -> int:
    formats = report_formats(args.format)
    check_spread_options(args)
    log_offset = _check_logs(args)
    scanned = _check_outputs(args)
    found = _found_logs(args, scanned)
    rules = load_checked_rules(args.rules)
    params = rule_overrides(args, rules)
    # the report pool's workers of many exports start now: their start overlaps the reading
    workers = start_workers(len(scanned[0]) if scanned else 0, formats)
    try:
        return _diagnose(args, formats, log_offset, scanned, found, rules, params, workers)
    finally:
        if workers is not None:
            workers.close(stop=True)  # unused (nothing to write, an error): ended at once


def _diagnose(args: argparse.Namespace, formats, log_offset, scanned, found, rules, params, workers) -> int:
    """The command's work once its inputs and outputs are checked; ``workers``: the report pool's, or None."""
    with run_progress("reading exports", len(scanned[0]) if scanned else 0) as bar:
        trace = _load(args, rules, scanned, lambda source: bar.step(source.source_id))
    usable = trace.usable_run_ids()  # runs with a device task that has a start and a duration
    shown = problem_lines(trace.problems, args.quiet)
    for line in shown:
        err(line)
    if not usable and not trace.jobs:
        err(nothing_usable(bool(shown)))
        return 2
    if args.logs is not None or found:
        _attach_logs(args, trace, log_offset, rules, params, formats, found)
    settings = report_settings(args.out, formats, trace, args.self_contained)  # for the jobs' reports and the runs'
    sent = _job_pages(trace, rules, params, args, settings, workers)  # the job verdict first
    problems = [*trace.problems, *(p for j in trace.jobs for p in j.problems)]
    # each run, then the rules comparing the runs (batch-size scaling) when they have something to say
    pages = _judge(trace, usable, rules, params, args, settings, [d for d, _ in sent], workers)
    job_pages = [(d, written()) for d, written in sent]
    index = analyzer.write_index([(d, p) for d, paths in [*job_pages, *pages] for p in paths], args.out)
    if not sys.stdout.isatty():  # into a pipe: the TSV of every finding, the job's first
        _print([*job_pages, *pages], index, args)
    elif pages:  # on a terminal the job verdicts are printed already; their ranks one line per rule
        left = _print_job_ranks(job_pages, pages, args)
        if left:
            _print(left, index, args, written=[*job_pages, *pages])
        elif not args.quiet:
            out.print(_wrote_line([*job_pages, *pages], index, args.out), markup=False)
    diagnoses = [d for d, _ in [*job_pages, *pages]]
    tripped = tripping_findings(diagnoses, args.fail_on) if args.fail_on else []
    if tripped:
        err(fail_on_line(args.fail_on, tripped))
        return 1
    return partial_input_code(problems, args.allow_partial, "the diagnosis covers")
