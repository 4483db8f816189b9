"""A Dask preload for the workers of a local cluster: ignore Ctrl-C, which the driver handles by ending them.

Ctrl-C reaches every process of the terminal's process group; a worker of the batch's own
cluster that took it would die with a traceback of its own while the driver closes the cluster.
"""

from __future__ import annotations

from analyzer.stop_signal import ignore_ctrl_c


def dask_setup(worker: object) -> None:
    """Run by Dask in each worker process as it starts (also one the nanny restarts)."""
    ignore_ctrl_c()
