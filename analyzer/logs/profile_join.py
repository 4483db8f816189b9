"""diagnose --logs: a log folder read into a profile's connection, its host activities on the runs' timeline."""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.logs.analysis import judge_logs, log_run_id
from analyzer.logs.clock import choose_offset
from analyzer.logs.links import attach_links
from analyzer.logs.marks import place_log_marks
from analyzer.logs.model import LogReport
from analyzer.logs.reader import load_logs
from analyzer.rule_engine.model import ConfiguredRules


def attach_logs(
    con: duckdb.DuckDBPyConnection,
    logdir: Path,
    run_ids: list[str],
    offset_min: int | None,
    configured: ConfiguredRules,
) -> LogReport:
    """Read ``logdir`` into ``con``, put its host activities on the timeline of ``run_ids`` (before the
    rules run, so that the time breakdown's gap causes see them) and judge the logs.

    ``offset_min``: the log's UTC offset in minutes, else read from the export (clock.choose_offset);
    the assumption made is the report's summary 'clock'."""
    run_id = log_run_id(logdir)
    loaded = load_logs(con, logdir, run_id, activity=True)
    offset, assumption = choose_offset(con, run_ids, offset_min)
    placed = place_log_marks(con, run_id, run_ids, offset)
    attach_links(con, run_id, run_ids, offset)
    report = judge_logs(con, run_id, configured)
    summary = {**report.summary, "not_log_files": loaded.not_log_files, "clock": assumption, "timeline_marks": placed}
    return LogReport(**{**report.__dict__, "summary": summary, "problems": loaded.problems, "lost_files": loaded.lost})
