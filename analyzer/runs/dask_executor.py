"""The Dask executor: run the per-item work on a Dask cluster, a local one or one at a scheduler's address.

Workers read the exports by path, so they must see the same files at the same paths as the
driver (a shared filesystem). A worker that dies loses nothing: the scheduler runs its task
again on another worker (up to ``distributed.scheduler.allowed-failures`` times, then the item
comes back as ``KilledWorker``). Results travel back as Arrow tables; only the driver writes.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from analyzer.errors import TriageError
from analyzer.execution import threads
from analyzer.runs.dask_worker_start import worker_version
from analyzer.stop_signal import stops_held
from analyzer.version import __version__

INSTALL_HINT = "pip install 'npu-triage[dask]'"
# On a stop, how long a worker of the batch's own cluster may take to close before it is killed. A busy
# worker closes only once its task returns (minutes on a large export), and that result is lost anyway.
STOP_GRACE_S = 0.5


# Each check of a running cluster ends within its time, so that a wrong address or an unfit cluster is
# said at once instead of leaving the batch waiting: a scheduler answers its handshake at once, a worker
# joins within seconds of its start, the import check is one small task per worker.
CONNECT_S = 10
WORKERS_S = 15
IMPORT_S = 15


class ExecutorError(TriageError):
    """The executor cannot start (not installed, scheduler unreachable). The message is meant for the user."""


def check_scheduler(address: str) -> None:
    """ExecutorError unless something at ``address`` (tcp://host:port) speaks Dask: a Dask scheduler sends
    its handshake (compression, python, pickle-protocol) as soon as a connection opens; another server
    (an HTTP port, a database) sends nothing or something else, and Dask's client would wait on it for good."""
    parsed = urlsplit(address if "://" in address else f"tcp://{address}")
    if parsed.scheme != "tcp" or not parsed.hostname or not parsed.port:
        return  # tls, ucx, inproc: left to Dask's own connect timeout
    try:
        with socket.create_connection((parsed.hostname, parsed.port), timeout=CONNECT_S) as conn:
            conn.settimeout(CONNECT_S)
            first = conn.recv(256)
    except TimeoutError:
        first = b""
    except OSError as exc:
        raise ExecutorError(
            f"cannot reach the Dask scheduler at {address} ({exc.strerror or exc}); start one with `dask scheduler`"
        ) from exc
    if b"pickle-protocol" not in first and b"compression" not in first:
        raise ExecutorError(
            f"{address} is not a Dask scheduler: the server there did not answer with Dask's handshake within "
            f"{CONNECT_S} s; give the address `dask scheduler` prints (tcp://host:8786 by default)"
        )


def check_workers(client: Any, address: str) -> None:
    """ExecutorError unless the cluster has a worker within WORKERS_S and every worker imports this package
    (a worker without it cannot run a task: its tasks would wait for ever)."""
    try:
        client.wait_for_workers(1, timeout=WORKERS_S)
    except TimeoutError as exc:
        raise ExecutorError(
            f"the Dask cluster at {address} has no worker (none joined within {WORKERS_S} s); "
            f"start some with `dask worker {address}`"
        ) from exc
    try:
        answers = client.run(worker_version, on_error="return", callback_timeout=IMPORT_S)
    except (TimeoutError, OSError) as exc:
        raise ExecutorError(f"the workers of the Dask cluster at {address} did not answer within {IMPORT_S} s") from exc
    unfit = sorted(w for w, a in answers.items() if a != __version__)
    if unfit:
        why = answers[unfit[0]]
        why = f"it has version {why}" if isinstance(why, str) else f"it cannot import npu-triage: {why}"
        raise ExecutorError(
            f"{len(unfit)} of the {len(answers)} worker(s) of the Dask cluster at {address} cannot run npu-triage "
            f"{__version__} ({unfit[0]}: {why}); install the same npu-triage on every worker ({INSTALL_HINT})"
        )


class DaskExecutor:
    """A Dask client: to the scheduler at ``scheduler``, or to a local cluster of ``workers`` processes."""

    def __init__(self, scheduler: str | None, workers: int, note: Callable[[str], None] | None = None) -> None:
        self.scheduler = scheduler
        self.workers = workers
        self.note = note  # told when fewer workers than asked are started
        self.client: Any = None  # a distributed.Client once started (Dask is imported only then)
        self.cluster: Any = None  # a distributed.LocalCluster, for a local cluster

    def __enter__(self) -> DaskExecutor:
        try:
            from distributed import Client
        except ImportError as exc:
            raise ExecutorError(
                f"--executor dask needs Dask distributed, which is not installed: {INSTALL_HINT}"
            ) from exc
        if self.scheduler:
            check_scheduler(self.scheduler)
            try:
                self.client = Client(self.scheduler, timeout=f"{CONNECT_S}s")
            except (OSError, TimeoutError, ValueError) as exc:
                raise ExecutorError(
                    f"cannot reach the Dask scheduler at {self.scheduler} ({exc}); start one with `dask scheduler`"
                ) from exc
            try:
                check_workers(self.client, self.scheduler)
            except BaseException:
                self.client.close()
                raise
            return self
        return self  # the local cluster starts with the first work, one worker per item at most (_start_local)

    @property
    def slots(self) -> int:
        """How many items run at once: the workers of the running cluster, else the local cluster's."""
        if self.scheduler and self.client is not None:
            return max(1, sum(self.client.nthreads().values()))
        return self.workers

    def _start_local(self, items: int) -> None:
        """Start the local cluster: --jobs workers, or one per item when there are fewer items (a worker
        with nothing to do only takes memory and start-up time), with a note saying so."""
        from distributed import Client, LocalCluster

        workers = max(1, min(self.workers, items))
        if workers < self.workers and self.note:
            self.note(f"--jobs {self.workers} is more than the {items} exports to analyse: {workers} Dask workers")
        with stops_held():  # a stop during the start is raised once the cluster exists, which is closed then
            # One task thread per worker process, as in the local pool; DuckDB brings its own threads,
            # each worker a share of the cores (execution/threads.py).
            self.cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                env={threads.ENV: str(threads.worker_thread_count(workers))},
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

        if not items:
            return
        if self.client is None:
            self._start_local(len(items))
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
