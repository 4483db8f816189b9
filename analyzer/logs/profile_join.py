"""diagnose --logs: a log folder read into a profile's connection, its host activities on the runs' timeline."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from analyzer.logs.analysis import judge_logs, log_run_id
from analyzer.logs.clock import choose_offset
from analyzer.logs.links import attach_links
from analyzer.logs.marks import place_log_marks, unplaced_note
from analyzer.logs.model import LogReport
from analyzer.logs.reader import LogLoad, load_logs
from analyzer.rule_engine.model import ConfiguredRules


@dataclass(frozen=True)
class AttachedLogs:
    """A log folder read into a profile's connection: what was read, the clock assumed, the records placed."""

    run_id: str
    loaded: LogLoad
    clock: str
    placed: int
    loaded_root: Path  # the log folder, resolved
    unplaced: str | None = None  # why none was placed, when the log's time lies outside the runs' (marks.py)


def read_attached(
    con: duckdb.DuckDBPyConnection,
    logdir: Path,
    run_ids: list[str],
    offset_min: int | None,
    run_id: str | None = None,
    loose: bool = False,
) -> AttachedLogs:
    """Read ``logdir`` into ``con`` as run ``run_id`` (default: the folder's name), put its host activities on
    the timeline of ``run_ids`` (before the rules run, so that the time breakdown's gap causes see them) and
    link its failed tasks to their operators (links.py). Every folder is read before any rule runs: the
    rules' sandbox closes the connection to files (rule_engine/runner.py).

    ``offset_min``: the log's UTC offset in minutes, else read from the export (clock.choose_offset);
    ``loose``: only the log files directly in ``logdir`` (collections.py)."""
    run_id = run_id or log_run_id(logdir)
    loaded = load_logs(con, logdir, run_id, activity=True, loose=loose)
    offset, assumption = choose_offset(con, run_ids, offset_min)
    placed = place_log_marks(con, run_id, run_ids, offset)
    unplaced = None if placed else unplaced_note(con, run_id, run_ids, offset)
    attach_links(con, run_id, run_ids, offset)
    return AttachedLogs(run_id, loaded, assumption, placed, Path(logdir).resolve(), unplaced)


def judge_attached(con: duckdb.DuckDBPyConnection, attached: AttachedLogs, configured: ConfiguredRules) -> LogReport:
    """The logs' own report: the rules of scope 'logs', with the clock assumed (summary 'clock') and the
    records placed on the timeline (summary 'timeline_marks'; 'timeline_note': why none was, when the log's time
    lies outside the runs')."""
    report = judge_logs(con, attached.run_id, configured)
    loaded = attached.loaded
    summary = {
        **report.summary,
        "not_log_files": loaded.not_log_files,
        "clock": attached.clock,
        "timeline_marks": attached.placed,
        "timeline_note": attached.unplaced,
    }
    return LogReport(**{**report.__dict__, "summary": summary, "problems": loaded.problems, "lost_files": loaded.lost})


def attach_logs(
    con: duckdb.DuckDBPyConnection,
    logdir: Path,
    run_ids: list[str],
    offset_min: int | None,
    configured: ConfiguredRules,
    run_id: str | None = None,
) -> LogReport:
    """One log folder read (read_attached) and judged (judge_attached)."""
    return judge_attached(con, read_attached(con, logdir, run_ids, offset_min, run_id), configured)
