"""`npu-triage logs LOGDIR`: read CANN logs, run the rules of scope 'logs', write the ranked findings."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from analyzer.atomic_files import write_text_atomically
from analyzer.cli.console import err, out
from analyzer.cli.output_paths import FOLDER, Output, ReadFolder, check_outputs
from analyzer.cli.partial_input import add_allow_partial
from analyzer.cli.progress import run_progress
from analyzer.cli.report_options import add_report_options, report_formats
from analyzer.cli.rule_options import add_rule_options, load_checked_rules, rule_overrides
from analyzer.cli.usage import UsageError
from analyzer.execution.memory import ENV, memory_limit_bytes
from analyzer.ingest.database import connect
from analyzer.logs.analysis import analyze_logs, log_run_id
from analyzer.logs.collections import Collection, find_collections
from analyzer.logs.layout import find_log_files
from analyzer.logs.model import LogReport
from analyzer.report.output_files import run_folder
from analyzer.rule_engine.model import SEVERITY_RANK, ConfiguredRules

# The log tables are written once and scanned a few times: DuckDB keeps what does not fit its limit in its
# temporary folder at little cost, so that a folder of many GB of logs is read in bounded memory. Without a
# limit given (--memory-limit, or the environment), this one: the machine's default share would be wasted.
LOGS_MEMORY_BYTES = 512 << 20


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "logs",
        help="read CANN logs (plog, device, asys, msnpureport, slog, per-rank folders) and rank what failed",
        description="Read CANN logs and write ranked findings: the first failure on top with the records around "
        "it, the rank that failed first, errors older than the run kept apart, repeated warnings counted.",
    )
    p.add_argument("logdir", type=Path, help="a folder holding log trees (or one log file)")
    add_report_options(p)
    add_allow_partial(p, "the reports")
    add_rule_options(p)
    p.set_defaults(func=run)


def logs_memory_bytes() -> int:
    """DuckDB's limit for reading logs: the user's (--memory-limit, NPU_TRIAGE_MEMORY_LIMIT) when given,
    else LOGS_MEMORY_BYTES (or the machine's default share when that is smaller)."""
    if os.environ.get(ENV, "").strip():
        return memory_limit_bytes()
    return min(memory_limit_bytes(), LOGS_MEMORY_BYTES)


def check_log_input(logdir: Path) -> None:
    """UsageError unless ``logdir`` exists and holds a log file."""
    if not logdir.exists():
        raise UsageError(f"{logdir}: no such file or folder")
    if not find_log_files(logdir):
        raise UsageError(f"{logdir}: holds no log file (*.log, messages, slogdlog, ...)")


def _write_index(pages: list[tuple[LogReport, Path]], out_dir: Path) -> Path | None:
    """logs-index.html linking every collection's logs.html, when there are several."""
    from analyzer.report.logs_index import render_logs_index

    if len(pages) < 2:
        return None
    index = Path(out_dir) / "logs-index.html"
    return write_text_atomically(index, render_logs_index(pages, index))


def write_log_report(report: LogReport, folder: Path, formats: list[str]) -> list[Path]:
    """logs.json / logs.md / logs.html of the report in ``folder``, each written atomically."""
    from analyzer.report.logs_html import render_logs_html
    from analyzer.report.logs_json import render_logs_json
    from analyzer.report.logs_markdown import render_logs_markdown

    renderers = {
        "json": ("logs.json", render_logs_json),
        "md": ("logs.md", render_logs_markdown),
        "html": ("logs.html", render_logs_html),
    }
    return [write_text_atomically(folder / renderers[f][0], renderers[f][1](report)) for f in formats]


def _print(report: LogReport, written: list[Path]) -> None:
    if not sys.stdout.isatty():
        for f in report.findings:
            cells = (report.run_id, f.code, f.severity, f.subject, f.message)
            out.file.write("\t".join(" ".join(str(c).split()) for c in cells) + "\n")  # one line per finding
        return
    s = report.summary
    out.print(
        f"{report.run_id}: {s['files']} file(s), {s['records']} record(s), {s['error_records']} error(s)", markup=False
    )
    for i, f in enumerate(report.findings, start=1):
        out.print(f"{i}. {f.code} {f.severity}: {f.message}", markup=False)
    for path in written:
        out.print(f"wrote {path}", markup=False)


def _exit_code(report: LogReport, args: argparse.Namespace, several: bool) -> int:
    """1 when a finding trips --fail-on, else 3 when a file could not be read (not --allow-partial), else 0."""
    where = f"{report.run_id}: " if several else ""
    if args.fail_on:
        tripped = [f for f in report.findings if SEVERITY_RANK[f.severity] >= SEVERITY_RANK[args.fail_on]]
        if tripped:
            first = tripped[0]
            err(f"npu-triage: {where}--fail-on {args.fail_on}: tripped by {first.code} {first.rule} ({first.subject})")
            return 1
    if report.lost_files and not args.allow_partial:
        lost = ", ".join(report.lost_files)
        err(f"npu-triage: {where}the report covers only what could be read ({lost}); exit code 3")
        return 3
    return 0


def _checked(args: argparse.Namespace) -> tuple[list[str], list[Collection], list, dict]:
    """The formats, the collections of LOGDIR and the rules, checked before any work (UsageError)."""
    formats = report_formats(args.format)
    check_log_input(args.logdir)
    collections = find_collections(args.logdir, log_run_id(args.logdir))
    folders = [Output("--out", run_folder(args.out, c.run_id), FOLDER) for c in collections]
    check_outputs([Output("--out", args.out, FOLDER), *folders], [ReadFolder(args.logdir)])
    rules = load_checked_rules(args.rules)
    return formats, collections, rules, rule_overrides(args, rules)


def _judge(args: argparse.Namespace, one: Collection, configured: ConfiguredRules, several: bool) -> LogReport:
    """One collection read (into a connection of its own) and judged; its reading problems on stderr."""
    con = connect(logs_memory_bytes())
    try:
        report = analyze_logs(con, one.root, configured, one.run_id, one.loose)
    finally:
        con.close()
    for problem in report.problems:
        err(f"npu-triage: {one.run_id + ': ' if several else ''}{problem}")
    return report


def run(args: argparse.Namespace) -> int:
    formats, collections, rules, params = _checked(args)
    several = len(collections) > 1
    if several:
        err(f"npu-triage: {args.logdir} holds {len(collections)} log collections, each judged on its own:")
        for c in collections:
            err(f"  {c.run_id}: {c.root}{' (its own files only)' if c.loose else ''}")
    configured = ConfiguredRules(tuple(rules), params, args.preview)
    codes, pages = [], []
    with run_progress("judging log collections", len(collections)) as bar:
        for one in collections:
            bar.step(one.run_id)
            report = _judge(args, one, configured, several)
            written = write_log_report(report, run_folder(args.out, one.run_id), formats)
            _print(report, written)
            pages += [(report, p) for p in written if p.name == "logs.html"]
            codes.append(_exit_code(report, args, several))
    if several and (index := _write_index(pages, args.out)) is not None and sys.stdout.isatty():
        out.print(f"wrote {index}", markup=False)
    return 1 if 1 in codes else max(codes)
