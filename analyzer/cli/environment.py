"""The environment variables the program reads, checked once before a command runs."""

from __future__ import annotations

import os

import duckdb

from analyzer.cli.usage import UsageError
from analyzer.duckdb_connect import connect_offline

MEMORY_LIMIT = "NPU_TRIAGE_MEMORY_LIMIT"
_NAMED_LIMITS = ("lean", "fast", "auto", "none")


def check_memory_limit(environ: dict[str, str] | None = None) -> None:
    """UsageError naming NPU_TRIAGE_MEMORY_LIMIT when it is neither a named setting nor a size
    DuckDB reads ('8GB', '900MiB')."""
    value = (os.environ if environ is None else environ).get(MEMORY_LIMIT, "").strip()
    if not value or value.lower() in _NAMED_LIMITS:
        return
    con = connect_offline()
    try:
        con.execute("SET memory_limit = ?", [value])
    except duckdb.Error:
        raise UsageError(
            f"{MEMORY_LIMIT}={value!r}: not a memory size (such as 8GB or 900MiB) nor one of {', '.join(_NAMED_LIMITS)}"
        ) from None
    finally:
        con.close()
