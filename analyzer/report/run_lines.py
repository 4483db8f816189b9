"""One line per ingested run (producer, versions, chip, settings, task count) and per ingest problem."""

from __future__ import annotations

import duckdb

from analyzer.ingest.model import Problem
from analyzer.ingest.sql_values import in_list


def run_lines(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> list[str]:
    """A line per run, in run id order."""
    rows = con.execute(
        "SELECT run_id, producer, export_type, coalesce(cann_version, '?'), coalesce(torch_npu_version, '-'), "
        "coalesce(chip, '?'), coalesce(profiler_level, '-'), coalesce(aic_metrics, 'none'), "
        f"coalesce(aic_mode, '-'), task_count FROM runs WHERE {in_list('run_id')} "
        "ORDER BY run_id",
        [run_ids],
    ).fetchall()
    return [
        f"{rid}: {prod} {etype}, CANN {cann}, torch_npu {tnpu}, chip {chip}, level {level}, "
        f"aic-metrics {aic}, {mode}, {tasks} tasks"
        for rid, prod, etype, cann, tnpu, chip, level, aic, mode, tasks in rows
    ]


def problem_lines(problems: list[Problem], quiet: bool = False) -> list[str]:
    """A line per problem, errors first, then in the order met; ``quiet`` (--quiet) leaves out those of
    severity info (the reports keep them)."""
    order = {"error": 0, "warning": 1, "info": 2}
    kept = [p for p in problems if not (quiet and p.severity == "info")]
    return [p.line() for p in sorted(kept, key=lambda p: order.get(p.severity, 3))]
