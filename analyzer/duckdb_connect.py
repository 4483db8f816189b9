"""Every DuckDB connection of the program: extensions are never installed or loaded on demand, and
the process's thread count (``execution/threads.py``) applies.

DuckDB fetches a missing extension over the network when a statement needs one (an SQLite file
given where a DuckDB file belongs, an https:// path in SQL). The program needs none beyond those
built into the wheel (json, parquet, icu), so it never lets DuckDB try: such a statement fails
with a message instead of a download.
"""

from __future__ import annotations

import duckdb

from analyzer.execution.threads import thread_count

OFFLINE = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}

DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of every DuckDB database file


def connect_offline(database: str = ":memory:", read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect`` with extension autoinstall and autoload off, on the process's thread count."""
    threads = thread_count()
    config = dict(OFFLINE) if threads is None else {**OFFLINE, "threads": threads}
    return duckdb.connect(database, read_only=read_only, config=config)


def is_duckdb_file(path) -> bool:
    """True when the file starts like a DuckDB database (checked before DuckDB opens it, so that an
    SQLite or other file is never handed to DuckDB, which would look for an extension to read it)."""
    try:
        with open(path, "rb") as f:
            return f.read(12)[8:12] == DUCKDB_MAGIC
    except OSError:
        return False
