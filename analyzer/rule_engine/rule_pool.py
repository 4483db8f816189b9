"""Run rule queries two at a time: on the caller's connection and on a second one beside it.

Most rule queries are small scans or window passes that DuckDB runs on one thread; two at a time
keep both cores busy. The second connection sees the normalized tables and the helper relations
(``views.helper_cursor``) but nothing the caller registered on its own connection (the scaling
views of several-run rules), so a job marked ``own_connection`` runs on the caller's connection.
Results come back in job order, whichever connection ran a job.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import duckdb

from analyzer.rule_engine.views import helper_cursor

T = TypeVar("T")
Job = Callable[[duckdb.DuckDBPyConnection], T]


def run_jobs(con: duckdb.DuckDBPyConnection, jobs: Sequence[Job], own_connection: Sequence[bool]) -> list[T]:
    """Each job's result, in order. ``con`` runs the ``own_connection`` jobs, then shares the rest
    with a second connection; the first exception of a job is raised once both have stopped."""
    shared = [i for i, own in enumerate(own_connection) if not own]
    if len(shared) < 2:
        return [job(con) for job in jobs]
    results: list = [None] * len(jobs)
    queue = _Queue(shared)
    second = helper_cursor(con)
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            beside = pool.submit(_drain, second, jobs, queue, results)
            try:
                for i, own in enumerate(own_connection):
                    if own:
                        results[i] = jobs[i](con)
                _drain(con, jobs, queue, results)
            finally:
                queue.close()  # after a failure here, the second one stops after its job
                beside.result()
    finally:
        second.close()
    return results


class _Queue:
    """Job numbers handed out once each, in order, to whichever connection asks first."""

    def __init__(self, numbers: list[int]) -> None:
        self._numbers, self._next, self._lock = numbers, 0, threading.Lock()

    def take(self) -> int | None:
        with self._lock:
            if self._next >= len(self._numbers):
                return None
            self._next += 1
            return self._numbers[self._next - 1]

    def close(self) -> None:
        with self._lock:
            self._next = len(self._numbers)


def _drain(con: duckdb.DuckDBPyConnection, jobs: Sequence[Job], queue: _Queue, results: list) -> None:
    try:
        while (i := queue.take()) is not None:
            results[i] = jobs[i](con)
    except BaseException:
        queue.close()  # the other connection stops after its current job
        raise
