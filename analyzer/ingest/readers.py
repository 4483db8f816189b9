"""The registry of file readers: file kind (as discovery names it) -> function filling normalized tables.

Every reader has the signature ``reader(con, paths, ctx) -> object`` and inserts into the
normalized tables ``BY NAME`` with ``run_id = ctx.run_id``. Readers report problems through
``ctx.report`` and never raise for bad content. Order matters only for readers that use rows
of another (none do: cross-table derivations live in ``finalize.py``).
"""

from __future__ import annotations

from analyzer.ingest.api_statistic import load_api_statistic
from analyzer.ingest.communication_json import load_communication, load_communication_matrix
from analyzer.ingest.communication_statistic import load_communication_statistic
from analyzer.ingest.core_utilization import (
    load_ai_core_utilization,
    load_ai_vector_core_utilization,
)
from analyzer.ingest.hbm_summary import load_ddr, load_hbm
from analyzer.ingest.l2_cache import load_l2_cache
from analyzer.ingest.memory_files import load_memory_record, load_npu_mem, load_npu_module_mem
from analyzer.ingest.op_statistic import load_op_statistic
from analyzer.ingest.op_summary import load_op_summary
from analyzer.ingest.operator_memory import load_operator_memory
from analyzer.ingest.sqlite_export import load_analysis_db, load_profiler_db
from analyzer.ingest.step_trace import load_step_trace
from analyzer.ingest.step_trace_time import load_step_trace_time
from analyzer.ingest.task_time import load_task_time
from analyzer.ingest.timeline import load_timeline

READERS = {
    "op_summary": load_op_summary,
    "op_statistic": load_op_statistic,
    "api_statistic": load_api_statistic,
    "step_trace_time": load_step_trace_time,
    "step_trace": load_step_trace,
    "task_time": load_task_time,
    "communication_statistic": load_communication_statistic,
    "communication": load_communication,
    "communication_matrix": load_communication_matrix,
    "memory_record": load_memory_record,
    "npu_module_mem": load_npu_module_mem,
    "npu_mem": load_npu_mem,
    "operator_memory": load_operator_memory,
    "l2_cache": load_l2_cache,
    "ai_core_utilization": load_ai_core_utilization,
    "ai_vector_core_utilization": load_ai_vector_core_utilization,
    "hbm": load_hbm,
    "ddr": load_ddr,
    "timeline": load_timeline,
    "torch_db": load_profiler_db,
    "msprof_db": load_profiler_db,
    "analysis_db": load_analysis_db,
}
