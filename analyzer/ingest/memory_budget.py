"""How much memory DuckDB may hold before it spills to its private temp folder.

Set by NPU_TRIAGE_MEMORY_LIMIT.

``auto`` (the default) keeps the whole process near twice the largest input file: DuckDB gets that
budget less what the interpreter, DuckDB's code and its untracked buffers take, and at least 1 GiB
(some plans need several hundred MiB however small the input, e.g. the SQLite readers' joins).
Past its limit DuckDB writes what it can to disk; an operation that cannot spill fails with an
out-of-memory error, and the command line then runs the command again once with ``none``.
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


def _setting() -> str:
    return os.environ.get(ENV, "").strip() or "auto"


def is_automatic() -> bool:
    """True when the limit comes from the input size (nobody set one)."""
    return _setting().lower() == "auto"


def duckdb_memory_limit(largest_input_bytes: int) -> str | None:
    """The value for DuckDB's ``memory_limit``, or None to leave DuckDB's own default."""
    setting = _setting()
    if setting.lower() == "none":
        return None
    if setting.lower() == "auto":
        budget = max(_FLOOR_BYTES, 2 * largest_input_bytes - _OVERHEAD_BYTES)
        return f"{budget >> 20}MiB"
    return setting


def largest_file_bytes(paths: Iterable[Path]) -> int:
    """Size of the largest of ``paths`` that can be read (0 when none)."""
    sizes = [0]
    for path in paths:
        try:
            sizes.append(Path(path).stat().st_size)
        except OSError:
            continue
    return max(sizes)


def lift_automatic_limit() -> bool:
    """After an out-of-memory error: switch an automatic limit to DuckDB's default (for this process
    and the workers it starts). Returns False when the user set the limit, which is then kept."""
    if not is_automatic():
        return False
    os.environ[ENV] = "none"
    return True
