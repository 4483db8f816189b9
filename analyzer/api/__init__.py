"""The library API (``import analyzer``): load exports, diagnose runs and jobs, write reports, diff two runs;
the command line calls these for its work. One concern per module:

- ``trace``: ``load`` / ``open_database`` -> ``Trace`` (tables, breakdown and per-step frames);
- ``rule_sets``: ``rules`` and the rules a diagnosis runs;
- ``diagnosing``: ``diagnose``, ``diagnose_runs``, ``diagnose_jobs``, ``diagnose_all``;
- ``reports``: ``report`` (a run's, a job's, the all-runs files), ``write_index``;
- ``batches``: ``batch``, every export of a tree into a catalog;
- ``diffs``: ``diff`` of two runs or two jobs; ``jobs``: ``job`` (a job's tables);
- ``logs``: ``attach_logs``, ``diagnose_logs`` (CANN logs read into a trace, judged);
- ``tables``: ``findings_table``; ``frames``: the views' tables as polars frames.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from analyzer.api.batches import batch
    from analyzer.api.diagnosing import diagnose, diagnose_all, diagnose_jobs, diagnose_runs
    from analyzer.api.diffs import Diff, DifferentModels, diff
    from analyzer.api.logs import attach_logs, diagnose_logs
    from analyzer.api.reports import report, write_index
    from analyzer.api.rule_sets import RuleSetError, rules
    from analyzer.api.tables import findings_table
    from analyzer.api.trace import Trace, load, open_database

# name -> the module defining it, imported when the name is first used: a command imports only what it
# calls (``diagnose`` never pays for the batch executors, the diff engine or the log readers).
_MODULES = {
    "batch": "batches",
    **dict.fromkeys(("diagnose", "diagnose_all", "diagnose_jobs", "diagnose_runs"), "diagnosing"),
    **dict.fromkeys(("Diff", "DifferentModels", "diff"), "diffs"),
    **dict.fromkeys(("attach_logs", "diagnose_logs"), "logs"),
    **dict.fromkeys(("report", "write_index"), "reports"),
    **dict.fromkeys(("RuleSetError", "rules"), "rule_sets"),
    "findings_table": "tables",
    **dict.fromkeys(("Trace", "load", "open_database"), "trace"),
}

__all__ = [
    "Diff",
    "DifferentModels",
    "RuleSetError",
    "Trace",
    "attach_logs",
    "batch",
    "diagnose",
    "diagnose_all",
    "diagnose_jobs",
    "diagnose_logs",
    "diagnose_runs",
    "diff",
    "findings_table",
    "load",
    "open_database",
    "report",
    "rules",
    "write_index",
]


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_MODULES[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
