"""Readers of the SQLite exports: torch_npu / MindSpore profiler db, msprof_*.db, analysis.db.

Each file is opened strictly read-only (``sqlite_open``), its tables are staged in DuckDB, then
the section readers fill the normalized tables: device tasks and ops (``sqlite_tasks``), host and
analysis tracks and steps (``sqlite_timeline``), time series and memory (``sqlite_series``),
communication and step analyses (``sqlite_analysis``), run metadata (``sqlite_meta``).
A damaged file or table becomes a problem on that file, never a traceback.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import duckdb

from analyzer.errors import first_line
from analyzer.ingest.model import ReadContext
from analyzer.ingest.sqlite import (
    sqlite_analysis,
    sqlite_meta,
    sqlite_op_mem,
    sqlite_series,
    sqlite_tasks,
    sqlite_timeline,
)
from analyzer.ingest.sqlite.sqlite_checks import (
    EXPECTED,
    drop_duplicate_tasks,
    report_missing_tables,
    report_negative_durations,
    report_unknown_ids,
    usable_rows,
)
from analyzer.ingest.sqlite.sqlite_open import StagedDb, UnusableDb, open_readonly, stage_tables

PROFILER_TABLES = (
    "STRING_IDS",
    "ENUM_API_TYPE",
    "ENUM_MODULE",
    "ENUM_MEMORY",
    "TASK",
    "COMPUTE_TASK_INFO",
    "TASK_PMU_INFO",
    "COMMUNICATION_OP",
    "COMMUNICATION_TASK_INFO",
    "CANN_API",
    "PYTORCH_API",
    "OVERLAP_ANALYSIS",
    "STEP_TIME",
    "HBM",
    "DDR",
    "LLC",
    "AICORE_FREQ",
    "NPU_MEM",
    "NPU_MODULE_MEM",
    "MEMORY_RECORD",
    "OP_MEMORY",
    "NPU_OP_MEM",
    "NPU_INFO",
    "META_DATA",
    "RANK_DEVICE_MAP",
    "connectionCats",
    "CONNECTION_IDS",
)
ANALYSIS_TABLES = ("StepTraceTime", "CommAnalyzerTime", "CommAnalyzerBandwidth")

Section = Callable[[StagedDb, ReadContext], object]
PROFILER_SECTIONS: tuple[Section, ...] = (
    sqlite_tasks.load_compute_ops,
    sqlite_tasks.load_communication_ops,
    sqlite_tasks.load_device_tasks,
    sqlite_timeline.load_host_apis,
    sqlite_timeline.load_framework_ops,
    sqlite_timeline.load_overlap,
    sqlite_timeline.load_communication_tracks,
    sqlite_timeline.load_flows,
    sqlite_timeline.load_step_times,
    sqlite_series.load_counters,
    sqlite_series.load_memory_records,
    sqlite_series.load_op_memory,
    sqlite_op_mem.load_npu_op_memory,
    sqlite_analysis.load_communication_op,
    sqlite_meta.record_run_facts,
)
ANALYSIS_SECTIONS: tuple[Section, ...] = (
    sqlite_analysis.load_step_trace_time,
    sqlite_analysis.load_comm_analyzer,
)


def _read_one(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    ctx: ReadContext,
    tables: tuple[str, ...],
    sections: tuple[Section, ...],
) -> None:
    try:
        with open_readonly(path) as conn:
            db = stage_tables(con, conn, path, tables, ctx, usable_rows)
    except UnusableDb as exc:
        ctx.report(path, "", "error", str(exc), "the file is skipped; re-export it or remove it")
        return
    except sqlite3.Error as exc:
        ctx.report(path, "", "error", f"SQLite cannot read it: {exc}", "the file is damaged; re-export it")
        return
    try:
        if not db.tables:
            ctx.report(
                path,
                "",
                "warning",
                f"none of the expected tables is present ({', '.join(tables[:6])}, ...)",
                "this is not a profiling export database; it is skipped",
            )
            return
        if tables is PROFILER_TABLES:
            _check_profiler_db(db, ctx)
        for section in sections:
            _run_section(section, db, ctx)
        ctx.mark_read(path)
    finally:
        db.drop()


def _check_profiler_db(db: StagedDb, ctx: ReadContext) -> None:
    """The checks of ``sqlite_checks`` on a staged profiler database (ids decoded where stored as text)."""
    db.id_columns = {(t, c) for t, checks in EXPECTED.items() for c, kind in checks.items() if kind == "id"}
    report_missing_tables(db, db.present, ctx)
    report_unknown_ids(db, ctx)
    report_negative_durations(db, ctx)
    drop_duplicate_tasks(db, ctx)


def _run_section(section: Section, db: StagedDb, ctx: ReadContext) -> None:
    """One section; a failure is reported against the file and the other sections still run."""
    try:
        section(db, ctx)
    except duckdb.Error as exc:
        first = first_line(exc)
        ctx.report(
            db.path,
            section.__name__.removeprefix("load_"),
            "error",
            f"could not be read: {first}",
            "this part is skipped; the rest of the file is used",
        )


def load_profiler_db(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """ascend_pytorch_profiler_*.db / msprof_*.db files -> every normalized table they feed."""
    for path in paths:
        _read_one(con, path, ctx, PROFILER_TABLES, PROFILER_SECTIONS)
    return len(paths)


def load_analysis_db(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """analysis.db / communication_analyzer.db -> steps decomposition and comm_ops."""
    for path in paths:
        _read_one(con, path, ctx, ANALYSIS_TABLES, ANALYSIS_SECTIONS)
    return len(paths)
