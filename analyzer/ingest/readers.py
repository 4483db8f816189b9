"""The registry of file readers: file kind (as discovery names it) -> function filling normalized tables.

Every reader has the signature ``reader(con, paths, ctx) -> object`` and inserts into the
normalized tables ``BY NAME`` with ``run_id = ctx.run_id``. Readers report problems through
``ctx.report`` and never raise for bad content. Order matters only for readers that use rows
of another (none do: cross-table derivations live in ``finalize.py``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping

# kind -> "module:function" under analyzer.ingest, in reading order; a bare "module" holds declarations
# whose ``reader(kind)`` builds the reader (the simple CSV tables). Modules are imported when a file of
# their kind is read, so that a text export never pays for the SQLite readers' imports (pyarrow).
_SPECS = {
    "op_summary": "csv.op_summary:load_op_summary",
    "op_statistic": "csv.declared_tables",
    "api_statistic": "csv.declared_tables",
    "step_trace_time": "csv.declared_tables",
    "step_trace": "csv.declared_tables",
    "task_time": "csv.task_time:load_task_time",
    "communication_statistic": "csv.declared_tables",
    "communication": "communication.communication_json:load_communication",
    "communication_matrix": "communication.communication_json:load_communication_matrix",
    "memory_record": "csv.declared_tables",
    "npu_module_mem": "csv.declared_tables",
    "npu_mem": "csv.declared_tables",
    "operator_memory": "csv.declared_tables",
    "l2_cache": "csv.declared_tables",
    "ai_core_utilization": "csv.core_utilization:load_ai_core_utilization",
    "ai_vector_core_utilization": "csv.core_utilization:load_ai_vector_core_utilization",
    "hbm": "csv.declared_tables",
    "ddr": "csv.declared_tables",
    "timeline": "timeline.timeline:load_timeline",
    "torch_db": "sqlite.sqlite_export:load_profiler_db",
    "msprof_db": "sqlite.sqlite_export:load_profiler_db",
    "analysis_db": "sqlite.sqlite_export:load_analysis_db",
}

# The kinds whose reader inserts device_task rows into timeline (msprof writes each task to two of
# them: finalize then keeps one row per task).
DEVICE_TASK_KINDS = frozenset({"timeline", "task_time", "torch_db", "msprof_db"})


class _Readers(Mapping):
    """kind -> reader function, imported on first use."""

    def __getitem__(self, kind: str) -> Callable:
        module, _, function = _SPECS[kind].partition(":")
        found = importlib.import_module(f"analyzer.ingest.{module}")
        return getattr(found, function) if function else found.reader(kind)

    def __iter__(self) -> Iterator[str]:
        return iter(_SPECS)

    def __len__(self) -> int:
        return len(_SPECS)


READERS: Mapping[str, Callable] = _Readers()
