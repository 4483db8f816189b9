"""How much memory DuckDB may hold before it spills to its private temp folder.

Set by NPU_TRIAGE_MEMORY_LIMIT.

``lean`` (the default) puts memory first: a budget meant to keep the whole process's peak RSS under
twice the largest input file. What the process holds outside DuckDB's limit (the interpreter and
libraries, about 90 MiB, and DuckDB's own allocations beside its buffer pool, which grow with the
input: about 150 MiB at 2.8 GB of msprof CSVs) is taken off, and the rest spills to disk. It is
never above ``fast``. It is the default because the benchmark's targets judge ``npu-triage
diagnose`` as a user runs it, peak RSS included; it took up to 41% longer than ``fast`` on the
benchmark's inputs of 2026-12-01 (the README's memory paragraph).

``fast`` (formerly ``auto``, which is still read as ``fast``) puts speed first: the total size of
the input files, at least twice the largest file less what the interpreter and DuckDB's own buffers
take, and at least 1 GiB (some plans need several hundred MiB however small the input, e.g. the
SQLite readers' joins); at most 40% of the machine's memory, so that two batch workers stay within
DuckDB's own default. The normalized tables take 1.3 to 1.5 times the text they come from, so the
biggest exports spill part of them: 2M msprof tasks take 39 s with this budget, 45 s with twice the
largest file (most tables spilled) and 33 s with none.

Past its limit DuckDB writes what it can to disk; an operation that cannot spill fails with an
out-of-memory error, and the command line then runs the command again once with ``none``.

``none`` is DuckDB's own default (80% of the machine's memory); any other value is a DuckDB size
('2GB', '900MiB').
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

ENV = "NPU_TRIAGE_MEMORY_LIMIT"
_OVERHEAD_BYTES = 256 << 20
_FLOOR_BYTES = 1 << 30
_MACHINE_SHARE = 0.4
# lean: 1.9 times the largest file (5% under the target, for run-to-run noise), less the process's
# memory outside DuckDB's limit: a fixed part and a share of the whole input; at least the floor.
_LEAN_FILE_FACTOR = 1.9
_LEAN_OVERHEAD_BYTES = 96 << 20
_LEAN_INPUT_DIVISOR = 32
_LEAN_FLOOR_BYTES = 64 << 20
# While the HTML report is drawn under lean, DuckDB keeps a quarter of its limit (at least the
# floor): the report's own memory (polars, plotly's figures, the page) comes on top of DuckDB's.
_REPORT_SHARE_DIVISOR = 4
_REPORT_FLOOR_BYTES = 32 << 20


DEFAULT = "lean"
# The budgets sized from the input files, by the names a user may write.
_AUTOMATIC = {"lean": "lean", "fast": "fast", "auto": "fast"}


def _setting() -> str:
    return os.environ.get(ENV, "").strip() or DEFAULT


def _automatic_mode() -> str | None:
    """``lean`` or ``fast`` when the limit comes from the input size, else None."""
    return _AUTOMATIC.get(_setting().lower())


def is_automatic() -> bool:
    """True when the limit comes from the input size (``lean``, the default, or ``fast``)."""
    return _automatic_mode() is not None


def duckdb_memory_limit(input_files: Iterable[Path]) -> str | None:
    """DuckDB's ``memory_limit`` for reading ``input_files``; None keeps DuckDB's default."""
    setting = _setting()
    if setting.lower() == "none":
        return None
    mode = _automatic_mode()
    if mode is not None:
        sizes = file_sizes(input_files)
        budget = _fast_bytes(sizes)
        if mode == "lean":
            budget = min(budget, _lean_bytes(sizes))
        return f"{budget >> 20}MiB"
    return setting


# How DuckDB shows its memory_limit setting ('130.0 MiB', '1.8 GiB'): a binary unit, one decimal.
_SHOWN_LIMIT = re.compile(r"^\s*([0-9.]+)\s*(bytes|KiB|MiB|GiB|TiB|PiB)\s*$")
_UNIT_SHIFT = {"bytes": 0, "KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40, "PiB": 50}


def current_limit_bytes(con: duckdb.DuckDBPyConnection) -> int | None:
    """DuckDB's memory limit in force on ``con``, in bytes, or None when DuckDB shows it in a form
    not known here. DuckDB shows it cut to one decimal of a binary unit ('1.8 GiB' for 2GB), so
    the value read back is at most the limit and less than 0.1 of that unit below it.

    >>> con = duckdb.connect()
    >>> _ = con.execute("SET memory_limit = '130MiB'")
    >>> current_limit_bytes(con) == 130 << 20
    True
    """
    shown = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    match = _SHOWN_LIMIT.match(str(shown))
    if match is None:
        return None
    return int(float(match.group(1)) * (1 << _UNIT_SHIFT[match.group(2)]))


def _fast_bytes(sizes: list[int]) -> int:
    budget = max(_FLOOR_BYTES, 2 * max(sizes, default=0) - _OVERHEAD_BYTES, sum(sizes))
    return min(budget, max(_FLOOR_BYTES, int(_physical_memory() * _MACHINE_SHARE)))


def _lean_bytes(sizes: list[int]) -> int:
    largest = max(sizes, default=0)
    outside = _LEAN_OVERHEAD_BYTES + sum(sizes) // _LEAN_INPUT_DIVISOR
    budget = int(_LEAN_FILE_FACTOR * largest) - outside
    return max(_LEAN_FLOOR_BYTES, budget)


def file_sizes(paths: Iterable[Path]) -> list[int]:
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


def lift_automatic_limit() -> str | None:
    """After an out-of-memory error: switch an automatic limit (``lean`` or ``fast``) to DuckDB's
    default (for this process and the workers it starts); returns the setting lifted, as the user
    would write it ('lean' when unset). None when the user set a size or ``none``, which is then
    kept."""
    setting = _setting()
    if not is_automatic():
        return None
    os.environ[ENV] = "none"
    return setting


@contextmanager
def report_budget(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Within: under ``lean``, DuckDB's limit on ``con`` lowered to a quarter (at least 32 MiB) and
    restored after, for drawing the HTML report. Its chart queries read small aggregates, while
    polars, plotly's figures and the page take about 100 MiB of their own at any input size: with
    DuckDB's buffers at the full lean budget beside them, the process would pass twice the largest
    file (torch_npu 1x: 327 MB against a target of 255). Lowering the limit makes DuckDB free or
    spill the blocks above it. Other settings keep their limit."""
    limit = current_limit_bytes(con) if _automatic_mode() == "lean" else None
    lowered = None if limit is None else max(_REPORT_FLOOR_BYTES, limit // _REPORT_SHARE_DIVISOR)
    if lowered is None or lowered >= limit or not _set_limit(con, lowered):
        yield
        return
    try:
        yield
    finally:
        _set_limit(con, limit)


def _set_limit(con: duckdb.DuckDBPyConnection, limit_bytes: int) -> bool:
    """Set DuckDB's limit; False when DuckDB could not free enough to lower it (then unchanged)."""
    try:
        con.execute(f"SET memory_limit = '{limit_bytes >> 20}MiB'")
    except duckdb.OutOfMemoryException:
        return False
    return True
