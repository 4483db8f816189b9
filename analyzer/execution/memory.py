"""DuckDB's memory limit: one fixed value per process, past which DuckDB spills to its temp folder.

The limit is, in order: the command line's ``--memory-limit``, the environment variable
``NPU_TRIAGE_MEMORY_LIMIT``, else a quarter of the machine's memory, at most 4 GiB (at most 1 GiB
once a multi-rank job is found: ``capped_default``). It does not depend on the input's size: an
export larger than the limit is streamed or spilled to disk by DuckDB, never read again with more
memory. Peak memory of the process is the limit plus what lives
outside DuckDB's buffer pool (the interpreter, libraries, and the report being drawn).
"""

from __future__ import annotations

import os
import re

from analyzer.errors import TriageError

ENV = "NPU_TRIAGE_MEMORY_LIMIT"
_MACHINE_SHARE = 4  # the default is the machine's memory divided by this ...
_CAP_BYTES = 4 << 30  # ... and at most this
_MIN_BYTES = 64 << 20  # below this DuckDB cannot hold the working set of a single query

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KIB|MIB|GIB|TIB)?\s*$", re.IGNORECASE)
_FACTOR = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KIB": 1 << 10,
    "MIB": 1 << 20,
    "GIB": 1 << 30,
    "TIB": 1 << 40,
}


class MemoryLimitError(TriageError, ValueError):
    """A memory limit that is not a size DuckDB can use; the message names where it came from."""


def parse_size(text: str, source: str) -> int:
    """Bytes of a size such as '512MB', '4GiB' or '2000000000' (bytes); ``source`` names where the
    text came from (an option or the environment variable) for the error message.

    >>> parse_size("512MB", "--memory-limit")
    512000000
    >>> parse_size("1.5GiB", "--memory-limit") == 3 << 29
    True
    """
    match = _SIZE.match(text)
    if match is None:
        raise MemoryLimitError(f"{source}: {text!r} is not a size (write e.g. 512MB, 4GB or 2GiB)")
    size = int(float(match.group(1)) * _FACTOR[(match.group(2) or "B").upper()])
    if size < _MIN_BYTES:
        raise MemoryLimitError(f"{source}: {text!r} is below the smallest usable limit, 64MiB")
    return size


def default_bytes() -> int:
    """A quarter of the machine's memory, at most 4 GiB."""
    return min(_CAP_BYTES, _physical_memory() // _MACHINE_SHARE)


def memory_limit_bytes(option: str | None = None) -> int:
    """The limit in force: ``option`` (the command line's), else the environment variable, else the
    default. Raises MemoryLimitError naming the option or variable when the value is not a size."""
    if option is not None:
        return parse_size(option, "--memory-limit")
    env = os.environ.get(ENV, "").strip()
    if env:
        return parse_size(env, ENV)
    return default_bytes()


def capped_default(cap_bytes: int, option: str | None = None) -> int:
    """``memory_limit_bytes(option)`` when the limit was given (the option or the environment), else the
    default share at most ``cap_bytes``: for work whose tables DuckDB spills cheaply (a job of many ranks)."""
    if option is not None or os.environ.get(ENV, "").strip():
        return memory_limit_bytes(option)
    return min(default_bytes(), cap_bytes)


def duckdb_setting(limit_bytes: int) -> str:
    """The limit as DuckDB's ``memory_limit`` setting takes it.

    >>> duckdb_setting(512 << 20)
    '524288KiB'
    """
    return f"{limit_bytes >> 10}KiB"


def _physical_memory() -> int:
    """The machine's memory in bytes (8 GiB where the OS does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30
