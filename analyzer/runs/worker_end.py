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
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.connection import Connection

from analyzer.stop_signal import ignore_ctrl_c


def driver_pipe() -> tuple[Connection, Connection]:
    """(the end each worker watches, the end the driver keeps open as long as it lives)."""
    return multiprocessing.Pipe(duplex=False)


def start_worker(watched: Connection) -> None:
    """The initializer of every worker process: ignore Ctrl-C, and exit once the driver is gone."""
    ignore_ctrl_c()

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
                process.join(1)
        except (OSError, ValueError, AttributeError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)
