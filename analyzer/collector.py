"""The cyclic garbage collector of the program's processes (the command's and its workers'): run rarely."""

from __future__ import annotations

import gc

# Containers made (net of those freed) before a young collection: CPython's 700 runs it hundreds of times in a
# command whose rows, paths and page parts are many small containers that die young and hold no cycles; each
# run walks every young container, and every tenth the older ones too. The older generations are collected
# after proportionally more young collections, so a command's few cycles are still freed as it goes.
YOUNG = 10_000
THRESHOLDS = (YOUNG, 50, 100)


def collect_rarely() -> None:
    """The collector of this process set to run rarely (``THRESHOLDS``), and never again over what exists now
    (the imported modules, their classes and functions: ``gc.freeze``). For a process of the program only (the
    command line's, a pool's worker): a library leaves its caller's collector alone."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
