"""The last line of diagnose and ingest when no run holds a device task: why, whether or not a problem was printed.

An export read without a problem can still hold no device task: a rank's summaries alone (step_trace_time.csv,
communication.json, analysis.db), a timeline of host events only. Pointing at "problems above" when none was
printed left the user with nothing to act on.
"""

from __future__ import annotations

# What a run is judged by, and where summaries alone count.
_HOLDS_NONE = (
    "the export holds none: a run is judged by its device tasks (kernel_details.csv, op_summary_*.csv, "
    "task_time_*.csv, a database's task table, a timeline's device tasks); a rank's summaries alone "
    "(step_trace_time.csv, communication.json, analysis.db) are read as one rank of a job of two or more "
    "ranks: give npu-triage the folder holding every rank"
)


def nothing_usable(problems_shown: bool) -> str:
    """The line, ``problems_shown``: whether problem lines were printed above it."""
    why = " (problems above)" if problems_shown else f"; {_HOLDS_NONE}"
    return f"npu-triage: nothing usable was found: no device task could be read{why}"
