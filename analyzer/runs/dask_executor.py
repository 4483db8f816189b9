"""The Dask executor: run the per-item work on a Dask cluster, a local one or one at a scheduler's address.

Workers read the exports by path, so they must see the same files at the same paths as the
driver (a shared filesystem). A worker that dies loses nothing: the scheduler runs its task
again on another worker (up to ``distributed.scheduler.allowed-failures`` times, then the item
comes back as ``KilledWorker``). Results travel back as Arrow tables; only the driver writes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from typing import Any

from analyzer.execution import threads
from analyzer.stop_signal import stops_held

INSTALL_HINT = "pip install 'npu-triage[dask]'"
# On a stop, how long a worker of the batch's own cluster may take to close before it is killed. A busy
# worker closes only once its task returns (minutes on a large export), and that result is lost anyway.
STOP_GRACE_S = 0.5


class ExecutorError(Exception):
    """The executor cannot start (not installed, scheduler unreachable). The message is meant for the user."""


class DaskExecutor:
    """A Dask client: to the scheduler at ``scheduler``, or to a local cluster of ``workers`` processes."""

    def __init__(self, scheduler: str | None, workers: int) -> None:
        self.scheduler = scheduler
        self.workers = workers
        self.client = None
        self.cluster = None

    def __enter__(self) -> DaskExecutor:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:
            raise ExecutorError(
                f"--executor dask needs Dask distributed, which is not installed: {INSTALL_HINT}"
            ) from exc
        if self.scheduler:
            try:
                self.client = Client(self.scheduler, timeout="30s")
            except (OSError, TimeoutError, ValueError) as exc:
                raise ExecutorError(
                    f"cannot reach the Dask scheduler at {self.scheduler} ({exc}); start one with `dask scheduler`"
                ) from exc
            return self
        try:
            with stops_held():  # a stop during the start is raised once the cluster exists, which is closed then
                # One task thread per worker process, as in the local pool; DuckDB brings its own threads,
                # each worker a share of the cores (execution/threads.py).
                self.cluster = LocalCluster(
                    n_workers=self.workers,
                    threads_per_worker=1,
                    env={threads.ENV: str(threads.worker_thread_count(self.workers))},
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address="127.0.0.1:0",  # its HTTP server on a free local port, never on every interface
                    # The batch reports each lost or failed run itself; the cluster's own log lines would
                    # repeat them, or, while the batch ends it, print a worker's failed heartbeat to a
                    # scheduler already gone.
                    silence_logs=logging.CRITICAL,
                    preload=["analyzer.runs.dask_worker_start"],  # the workers ignore Ctrl-C: this process ends them
                )
                self.client = Client(self.cluster)
        except BaseException as exc:  # __exit__ is not called when __enter__ fails
            self.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None = None, *exc: object) -> None:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            if exc_type is not None:  # a stop or an error: end the workers now, as the local pool does
                self.cluster.sync(_close_workers, self.cluster, STOP_GRACE_S)
            self.cluster.close()

    def completed(
        self, fn: Callable[..., Any], items: list[Any], *args: Any
    ) -> Iterator[tuple[Any, Any | BaseException]]:
        """Submit every item at once; yield (item, result or the exception that lost it) as each finishes."""
        from distributed import as_completed

        futures = {self.client.submit(fn, item, *args, pure=False): item for item in items}
        try:
            for future in as_completed(list(futures)):
                item = futures.pop(future)
                try:
                    result = future.result()
                except Exception as exc:  # KilledWorker after repeated worker deaths, or a lost scheduler
                    result = exc
                future.release()  # the worker may drop the tables now
                yield item, result
        finally:  # also when the caller stops early: nothing left running for this client
            if futures:
                self.client.cancel(list(futures))


async def _close_workers(cluster: Any, grace_s: float) -> None:
    """Close every nanny of the local ``cluster``, each killing its worker process if it has not closed within
    ``grace_s`` (``cluster.close`` alone waits 4 s for a busy worker). A killed worker that is slow to be reaped
    (a timeout here) is ended all the same, and would exit with this process anyway: the stop goes on."""
    await asyncio.gather(*(nanny.close(timeout=grace_s) for nanny in cluster.workers.values()), return_exceptions=True)
