"""How much memory DuckDB may hold before it spills to its private temp folder.

Set by NPU_TRIAGE_MEMORY_LIMIT.

``auto`` (the default) is the total size of the input files, at least twice the largest file less
what the interpreter and DuckDB's own buffers take, and at least 1 GiB (some plans need several
hundred MiB however small the input, e.g. the SQLite readers' joins); at most 40% of the machine's
memory, so that two batch workers stay within DuckDB's own default. The normalized tables take 1.3
to 1.5 times the text they come from, so the biggest exports spill part of them: 2M msprof tasks
take 39 s with this budget, 45 s with twice the largest file (most tables spilled) and 33 s with
none. Past its limit DuckDB writes what it can to disk; an operation that cannot spill fails with
an out-of-memory error, and the command line then runs the command again once with ``none``.
``none`` is DuckDB's own default (80% of the machine's memory); any other value is a DuckDB size
('2GB', '900MiB').
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

ENV = "NPU_TRIAGE_MEMORY_LIMIT"
_OVERHEAD_BYTES = 256 << 20
_FLOOR_BYTES = 1 << 30
_MACHINE_SHARE = 0.4


def _setting() -> str:
    return os.environ.get(ENV, "").strip() or "auto"


def is_automatic() -> bool:
    """True when the limit comes from the input size (nobody set one)."""
    return _setting().lower() == "auto"


def duckdb_memory_limit(input_files: Iterable[Path]) -> str | None:
    """DuckDB's ``memory_limit`` for reading ``input_files``; None keeps DuckDB's default."""
    setting = _setting()
    if setting.lower() == "none":
        return None
    if setting.lower() == "auto":
        sizes = _sizes(input_files)
        budget = max(_FLOOR_BYTES, 2 * max(sizes, default=0) - _OVERHEAD_BYTES, sum(sizes))
        budget = min(budget, max(_FLOOR_BYTES, int(_physical_memory() * _MACHINE_SHARE)))
        return f"{budget >> 20}MiB"
    return setting


def _sizes(paths: Iterable[Path]) -> list[int]:
    """Sizes of the ``paths`` that can be read."""
    sizes = []
    for path in paths:
        try:
            sizes.append(Path(path).stat().st_size)
        except OSError:
            continue
    return sizes


def _physical_memory() -> int:
    """The machine's memory in bytes (a large value where the OS does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 40


def lift_automatic_limit() -> bool:
    """After an out-of-memory error: switch an automatic limit to DuckDB's default (for this process
    and the workers it starts). Returns False when the user set the limit, which is then kept."""
    if not is_automatic():
        return False
    os.environ[ENV] = "none"
    return True
