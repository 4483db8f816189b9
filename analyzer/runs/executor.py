"""Executors: run a plain function over many items in worker processes and yield each result as it finishes.

An executor knows nothing of catalogs or exports: batch and job analysis hand it a picklable
function and its items, and get back ``(item, result)`` pairs in completion order, where the
result is the exception that lost the item when its worker died. ``LocalPool`` is the local
process pool (the default); ``dask_executor.DaskExecutor`` runs the same function on a Dask
cluster. Only the caller (the driver) writes anything.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import as_completed
from multiprocessing.connection import Connection
from typing import Any, Protocol, TypeVar

from analyzer.execution import threads
from analyzer.runs.work import INFRASTRUCTURE, RunTables, failure_table
from analyzer.runs.worker_end import StartedPool, start_worker
from analyzer.stop_signal import ctrl_c_ignored

Item = TypeVar("Item")


class _Task(Protocol):
    """A run or a job to analyse: how the catalog names its place, and its fingerprint."""

    @property
    def label(self) -> str: ...

    @property
    def fingerprint(self) -> str: ...


class Executor(Protocol):
    """What batch and job analysis need from an executor."""

    @property
    def slots(self) -> int:
        """How many items run at once (``chunks.py`` plans about two chunks for each)."""
        ...

    def completed(
        self, fn: Callable[..., Any], items: list[Item], *args: Any
    ) -> Iterator[tuple[Item, Any | BaseException]]:
        """Run ``fn(item, *args)`` for every item; yield (item, result or the exception that lost it)."""
        ...


def default_jobs() -> int:
    """One worker per CPU, at least 1."""
    return max(1, os.cpu_count() or 1)


def _pool(workers: int, start_now: bool = False) -> StartedPool:
    """A pool of ``workers`` batch workers, each with its share of the cores (``execution/threads.py``)."""
    return StartedPool(workers, _start_pool_worker, (threads.worker_thread_count(workers),), start_now)


def _start_pool_worker(watched: Connection, thread_count: int) -> None:
    """The initializer of every worker process: its share of the cores for DuckDB (``execution/threads.py``),
    and the end of the worker with its driver (``worker_end.start_worker``)."""
    os.environ[threads.ENV] = str(thread_count)
    start_worker(watched)


class LocalPool:
    """A process pool on this machine; with ``jobs == 1`` the work runs in this process (tests, debuggers).

    Entered (``with``), it starts its workers at once, so that their start (an interpreter, the
    imports) goes on while the caller plans the work; ``completed`` then hands the work to them."""

    def __init__(self, jobs: int, note: Callable[[str], None] | None = None) -> None:
        self.jobs = jobs
        self.note = note  # told of work a lost worker left, which the caller then does itself
        self._started: StartedPool | None = None

    def __enter__(self) -> LocalPool:
        if self.jobs > 1 and self._started is None:
            self._started = _pool(self.jobs, start_now=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._started is not None:  # started, never used
            self._started.close(stop=True)
            self._started = None

    @property
    def slots(self) -> int:
        """How many items run at once."""
        return self.jobs

    def completed(
        self, fn: Callable[..., Any], items: list[Item], *args: Any
    ) -> Iterator[tuple[Item, Any | BaseException]]:
        if not items:
            return
        if self.jobs <= 1:
            for item in items:
                yield item, fn(item, *args)
            return
        # the pool started on entering, else one of no more workers than items (never one with nothing to do)
        pool, self._started = self._started or _pool(min(self.jobs, len(items))), None
        finished = False
        try:
            with ctrl_c_ignored():  # the workers are started as work is submitted
                futures = {pool.executor.submit(fn, item, *args): item for item in items}
            for future in as_completed(list(futures)):
                try:
                    result = future.result()
                except Exception as exc:  # the worker process died (killed, out of memory)
                    result = exc
                yield futures.pop(future), result  # the result is the caller's to keep or drop
            finished = True
        finally:  # stopped early (Ctrl-C, SIGTERM, an error of the caller): the workers' results are lost anyway
            pool.close(stop=not finished)


def lost_table(task: _Task, exc: BaseException) -> RunTables:
    """The failures row of a task lost with its worker, marked INFRASTRUCTURE: the next batch tries it again."""
    why = f"{type(exc).__name__}: {exc}"
    return failure_table(task.label, task.fingerprint, f"{INFRASTRUCTURE}worker process failed: {why}")
