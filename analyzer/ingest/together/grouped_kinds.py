"""The file kinds read many runs at a time (csv_group), each with its reader's statement and checks."""

from __future__ import annotations

from functools import cache

from analyzer.ingest.csv import op_summary, task_time
from analyzer.ingest.csv.csv_columns import column_types
from analyzer.ingest.csv.csv_group import GroupRead
from analyzer.ingest.csv.declared_tables import DECLARED
from analyzer.ingest.inserts import constant_params

# The JSON kinds read together (``together._read_json``).
JSON_KINDS = frozenset({"communication", "communication_matrix"})
# The timeline JSON, read together when it is one file (``timeline_group``).
TIMELINE = "timeline"


@cache
def group_read(kind: str) -> GroupRead | None:
    """How a kind's files are read together; None for a kind read one export at a time."""
    if kind == "op_summary":
        return GroupRead(
            "ops",
            op_summary.ops_statement,
            op_summary.column_types,
            op_summary.ROW_KEY,
            op_summary.TIMES,
            op_summary.UNUSABLE_ROWS,
        )
    if kind == "task_time":
        t = task_time
        return GroupRead("timeline", t.statement, t.types, t.ROW_KEY, t.TIMES, "", constant_params(t.CONSTANTS))
    d = DECLARED.get(kind)
    if d is None:
        return None
    fields = d.fields
    constants = constant_params(d.constants)
    return GroupRead(d.table, d.statement, lambda columns: column_types(columns, fields), (), d.times(), "", constants)


def read_together(kind: str) -> bool:
    """Whether files of ``kind`` are read many runs at a time."""
    return kind in JSON_KINDS or kind == TIMELINE or group_read(kind) is not None
