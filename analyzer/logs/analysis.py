"""The logs facade: a log folder -> tables -> rules of scope 'logs' -> a ranked LogReport."""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.logs.context import failure_context, log_summary
from analyzer.logs.model import LogReport
from analyzer.logs.reader import load_logs
from analyzer.rule_engine.model import ConfiguredRules
from analyzer.rule_engine.ranking import rank_findings
from analyzer.rule_engine.runner import run_rules
from analyzer.version import __version__


def log_run_id(root: Path) -> str:
    """The run id of a log folder: its name (the file's, for a single file).

    >>> log_run_id(Path("/data/asys_output_20240912"))
    'asys_output_20240912'
    """
    return Path(root).resolve().name or "logs"


def judge_logs(con: duckdb.DuckDBPyConnection, run_id: str, configured: ConfiguredRules) -> LogReport:
    """Run the rules of scope 'logs' over the run's log tables (already loaded): ranked findings, the
    records around the first failure, and the reading summary."""
    configured = configured.where(lambda r: r.scope == "logs")
    findings, outcomes = run_rules(con, configured, [run_id])
    ranked = rank_findings(findings)
    columns, rows = failure_context(con, run_id, ranked)
    return LogReport(run_id, log_summary(con, run_id), ranked, outcomes, columns, rows, tool_version=__version__)


def analyze_logs(
    con: duckdb.DuckDBPyConnection,
    root: Path,
    configured: ConfiguredRules,
    run_id: str | None = None,
    loose: bool = False,
) -> LogReport:
    """Read the log folder ``root`` (``loose``: only its own files) into ``con`` as ``run_id`` (default:
    its name) and judge it (see judge_logs); problems of the reading (binary or unreadable files) are in
    the report's ``problems``."""
    run_id = run_id or log_run_id(root)
    loaded = load_logs(con, root, run_id, loose=loose)
    report = judge_logs(con, run_id, configured)
    summary = {**report.summary, "not_log_files": loaded.not_log_files}
    return LogReport(**{**report.__dict__, "summary": summary, "problems": loaded.problems, "lost_files": loaded.lost})
