"""CANN logs on a Trace: log folders read into it (their host activities become gap causes of the runs'
time breakdown, their failed tasks linked to operators), then judged by the rules of scope 'logs'."""

from __future__ import annotations

from pathlib import Path

from analyzer.api.diagnosing import Params
from analyzer.api.rule_sets import configured
from analyzer.api.trace import Trace
from analyzer.logs.analysis import log_run_id
from analyzer.logs.beside import FoundLogs, found_logs
from analyzer.logs.collections import find_collections
from analyzer.logs.model import LogReport
from analyzer.logs.profile_join import AttachedLogs, judge_attached, read_attached
from analyzer.rule_engine.model import Rule


def logs_beside(trace: Trace) -> list[FoundLogs]:
    """The log collections found inside or beside the trace's exports (analyzer/logs/beside.py)."""
    return found_logs(Path(s.root) for s in trace.sources)


def attach_logs(
    trace: Trace,
    logdir: Path | str | None = None,
    *,
    utc_offset_min: int | None = None,
    found: list[FoundLogs] | None = None,
) -> list[AttachedLogs]:
    """Read log folders into the trace before it is diagnosed: each collection of ``logdir`` on every usable
    run, or (``logdir`` None) each collection ``found`` beside the exports (default: ``logs_beside``) on
    the runs of its exports. ``utc_offset_min``: the logs' UTC offset, else read from the export.
    Returns what was attached (also kept in ``trace.logs``)."""
    if logdir is not None:
        usable = trace.usable_run_ids()
        collections = find_collections(Path(logdir), log_run_id(Path(logdir)))
        todo = [(c.root, usable, c.run_id, c.loose) for c in collections]
    else:
        todo = [
            (f.logdir, _runs_of(trace, f.exports), f.run_id, f.loose)
            for f in (logs_beside(trace) if found is None else found)
        ]
    attached = [read_attached(trace.con, d, runs, utc_offset_min, rid, loose) for d, runs, rid, loose in todo]
    trace.logs.extend(attached)
    return attached


def _runs_of(trace: Trace, exports: tuple[Path, ...]) -> list[str]:
    """The usable runs read from these export folders (a source's runs: its id, or its id + '/dev<N>')."""
    roots = {Path(e).resolve() for e in exports}
    ids = [s.source_id for s in trace.sources if Path(s.root).resolve() in roots]
    return [r for r in trace.usable_run_ids() if any(r == i or r.startswith(i + "/") for i in ids)]


def diagnose_logs(
    trace: Trace, *, rule_set: list[Rule] | None = None, params: Params | None = None, preview: bool = False
) -> list[LogReport]:
    """The report of each log collection attached to the trace (``trace.logs``): the rules of scope 'logs',
    the clock assumed and the records placed on the timeline."""
    rules = configured(rule_set, params, preview)
    return [judge_attached(trace.con, one, rules) for one in trace.logs]
