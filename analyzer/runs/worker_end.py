"""Worker processes end with their driver: at once when it stops, within a second when it is killed.

Ctrl-C reaches every process of the terminal's process group; workers ignore it and the driver,
which handles it, ends them (``stop_workers``), as it does on SIGTERM. When the driver is killed
outright (kill -9) no one ends them, so each worker watches a pipe whose only writing end the
driver holds (``driver_pipe``): the pipe reaches its end when the driver is gone, however it
went, and the worker exits instead of finishing a task whose result no one will read. The
resource tracker exits by itself once the driver and its workers are gone.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.connection import Connection
from typing import Any

from analyzer.collector import collect_rarely
from analyzer.stop_signal import ctrl_c_ignored, ignore_ctrl_c


def driver_pipe() -> tuple[Connection, Connection]:
    """(the end each worker watches, the end the driver keeps open as long as it lives)."""
    return multiprocessing.Pipe(duplex=False)


class StartedPool:
    """A process pool whose workers end with their driver: spawned (not forked: DuckDB's threads; not
    forkserver, whose socket folder outlives a killed driver), each given the end of ``driver_pipe`` it
    watches as ``initializer``'s first argument (before ``initargs``). With ``start_now`` one do-nothing task
    per worker starts them all at once (workers start as work is submitted), so that their start, an
    interpreter and its imports, overlaps the caller's own work."""

    def __init__(
        self, workers: int, initializer: Callable[..., None], initargs: tuple[Any, ...] = (), start_now: bool = True
    ) -> None:
        watched, self.alive = driver_pipe()  # ``alive`` stays open here until the pool has shut down
        self.executor = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=initializer,
            initargs=(watched, *initargs),
        )
        if start_now:
            with ctrl_c_ignored():
                for _ in range(workers):
                    self.executor.submit(_started)

    def close(self, stop: bool = False) -> None:
        """Shut the pool down, its queued work done (or its workers ended at once with ``stop``); idempotent."""
        if stop:
            stop_workers(self.executor)
        self.executor.shutdown(wait=True, cancel_futures=True)
        self.alive.close()


def _started() -> None:
    """A task that only starts a worker, once its initializer has run."""


def start_worker(watched: Connection) -> None:
    """The initializer of every worker process: ignore Ctrl-C, exit once the driver is gone, and run the
    collector rarely, as the command's process does (analyzer/collector.py)."""
    ignore_ctrl_c()
    collect_rarely()

    def watch() -> None:
        try:
            watched.recv_bytes()  # nothing is ever sent: this returns only at the pipe's end
        except (EOFError, OSError):
            pass
        os._exit(1)  # the driver is gone: nothing this worker does can reach a catalog any more

    threading.Thread(target=watch, name="npu-triage-driver-watch", daemon=True).start()


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """End the pool's worker processes now (SIGTERM, then SIGKILL after 2 s) and drop queued work."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        try:
            process.terminate()
        except (OSError, ValueError, AttributeError):  # already gone
            pass
    deadline = time.monotonic() + 2
    for process in processes:
        try:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(5)  # a killed process is gone once the kernel has torn it down: slower on a busy machine
        except (OSError, ValueError, AttributeError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)
