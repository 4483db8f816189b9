"""The batch's temporary folder for unpacked archives, and the removal of those a killed batch left behind.

A stopped batch (Ctrl-C, SIGTERM, an error) removes its own folder; one killed outright (kill -9)
cannot, so each folder carries its batch's process id and the next batch removes the folders of
batches that no longer run. ``temp_root`` makes such a folder the temporary folder of the batch
and of every process it starts (workers, a local Dask cluster), so that what they leave there
(DuckDB's spill folders, Dask's scratch space) goes with it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PREFIX = "npu-triage-batch-"


def scratch_folder() -> tempfile.TemporaryDirectory:
    """A new temporary folder named for this process, removed when the ``with`` block ends."""
    remove_orphans()
    return tempfile.TemporaryDirectory(prefix=f"{PREFIX}{os.getpid()}-")


@contextmanager
def temp_root() -> Iterator[Path]:
    """A new batch folder that is this process's temporary folder (``tempfile`` and ``TMPDIR``, which the
    processes started in the block inherit) until the block ends; then the old one is back and it is removed."""
    before = tempfile.tempdir, os.environ.get("TMPDIR")
    with scratch_folder() as folder:
        tempfile.tempdir = os.environ["TMPDIR"] = folder
        try:
            yield Path(folder)
        finally:
            tempfile.tempdir = before[0]
            if before[1] is None:
                os.environ.pop("TMPDIR", None)
            else:
                os.environ["TMPDIR"] = before[1]


def remove_orphans(parent: Path | None = None) -> list[Path]:
    """Remove the folders (of this user) whose batch process no longer runs; returns them."""
    parent = Path(parent or tempfile.gettempdir())
    removed = []
    for folder in parent.glob(f"{PREFIX}*-*"):
        pid = folder.name[len(PREFIX) :].split("-", 1)[0]
        try:
            if not pid.isdigit() or folder.stat().st_uid != os.geteuid() or _running(int(pid)):
                continue
        except OSError:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process of that number: running
        return True
    return True
