"""What runs in Dask workers before any task: a local cluster's preload, a running cluster's version check.

The preload makes the workers ignore Ctrl-C, which the driver handles by ending them. Ctrl-C reaches
every process of the terminal's process group; a worker of the batch's own
cluster that took it would die with a traceback of its own while the driver closes the cluster.
"""

from __future__ import annotations

from analyzer.stop_signal import ignore_ctrl_c
from analyzer.version import __version__


def dask_setup(worker: object) -> None:
    """Run by Dask in each worker process as it starts (also one the nanny restarts)."""
    ignore_ctrl_c()


def worker_version() -> str:
    """The npu-triage version a worker imports: run on every worker of a cluster before a batch (a worker that
    cannot import this module answers with the error instead)."""
    return __version__
