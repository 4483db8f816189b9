"""End the command-line process once a command has returned, without the interpreter's teardown.

After a command the process holds its in-memory DuckDB database (hundreds of MB of table blocks
after a big export). A normal exit frees it block by block when the command lets go of its
connection (30 to 60 ms at torch_npu 1x) and then tears every other object down (30 to 40 ms
more); here the command's connection is kept (``keep_until_exit``) and the OS takes the memory
back at once: 5 to 9 ms from the command's return to the process's end.

What a normal exit does first still happens: the ``atexit`` callbacks run (among them
``weakref.finalize``'s, which remove DuckDB's spill folders, see ``ingest/database.py``), and
stdout and stderr are flushed. Nothing else is pending by then: report files are written
atomically and closed, DuckDB files (``--db``, catalogs) are detached or closed by their commands,
and thread pools are joined. Callers of ``main()`` in the same process (tests) see none of this:
their objects are freed as usual.
"""

from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Callable
from typing import NoReturn

# Objects held until the process ends; None while no ``run_then_end`` runs a command (nothing is held).
_kept: list[object] | None = None


def keep_until_exit(obj: object) -> None:
    """Hold ``obj`` until the process ends, when it will end at once (``run_then_end``), so that it
    is not freed piece by piece first; otherwise do nothing."""
    if _kept is not None:
        _kept.append(obj)


def release_kept() -> None:
    """Let go of the objects held so far (before a command runs again, e.g. with more memory)."""
    if _kept is not None:
        _kept.clear()


def run_then_end(command: Callable[[], int]) -> NoReturn:
    """Run ``command`` and end the process with its exit code (``end_process``)."""
    global _kept
    _kept = []
    end_process(command())


def end_process(code: int) -> NoReturn:
    """Run the exit callbacks, flush stdout and stderr, and end the process with ``code``."""
    atexit._run_exitfuncs()  # what interpreter exit runs first; only the object teardown is skipped
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`) or a closed stream: nothing to save
            pass
    os._exit(code)
