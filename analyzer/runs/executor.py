"""The local executor: run the per-run work function in a process pool and yield results as they finish."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed

from analyzer.runs.work import RunTables, RunTask, WorkSettings, analyze_run, failure_table


def default_jobs() -> int:
    """One worker per CPU, at least 1."""
    return max(1, os.cpu_count() or 1)


def _context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def run_tasks(tasks: list[RunTask], settings: WorkSettings, jobs: int) -> Iterator[tuple[RunTask, RunTables]]:
    """Yield (task, its tables) in completion order; a worker that dies gives a failures row.

    With ``jobs == 1`` the work runs in this process (no pool), which is what tests and
    debuggers want; the function and its results are the same.
    """
    if jobs <= 1:
        for task in tasks:
            yield task, analyze_run(task, settings)
        return
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=_context())
    try:
        futures = {pool.submit(analyze_run, task, settings): task for task in tasks}
        for future in as_completed(futures):
            task = futures[future]
            try:
                tables = future.result()
            except Exception as exc:  # the worker process died (killed, out of memory)
                tables = failure_table(
                    task.label, task.fingerprint, f"worker process failed: {type(exc).__name__}: {exc}"
                )
            yield task, tables
    finally:  # also when the caller stops early: drop what has not started
        pool.shutdown(wait=True, cancel_futures=True)
