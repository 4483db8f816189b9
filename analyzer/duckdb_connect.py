"""Every DuckDB connection of the program, built in one place: offline, on the process's threads and
memory limit, spilling to a private folder; and the sandbox that closes it to files.

DuckDB fetches a missing extension over the network when a statement needs one (an SQLite file
given where a DuckDB file belongs, an https:// path in SQL). The program needs none beyond those
built into the wheel (json, parquet, icu), so it never lets DuckDB try: such a statement fails
with a message instead of a download.

The sandbox, for SQL the user writes (`query`, rule files of `--rules`): DuckDB's
``enable_external_access = false`` closes every way out of the loaded tables: no COPY TO, no
ATTACH, no INSTALL or LOAD of an extension, no read_csv/read_text/glob of a file, no change of the
temporary folder. It cannot be switched back on while the database runs, so a statement of the
user's cannot undo it; DuckDB still spills to the temporary folder set before.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from analyzer.execution.memory import duckdb_setting, memory_limit_bytes
from analyzer.execution.threads import thread_count

OFFLINE = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}

DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of every DuckDB database file


def connect_offline(
    database: str = ":memory:",
    read_only: bool = False,
    limit_bytes: int | None = None,
    *,
    spill_now: bool = True,
    threads: int | None = None,
) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect`` with extension autoinstall and autoload off, on ``threads`` threads, else the process's
    thread count.

    DuckDB spills to disk past its memory limit (``limit_bytes``, else the process's limit:
    ``execution/memory.py``) into a private temporary folder, removed when the connection is freed
    or the process exits, so that it never writes beside an export (its default is '.tmp' in the
    current folder) or beside a catalog file ('<file>.tmp').

    ``spill_now=False``, for connections that seldom spill (a catalog, a batch's planning): the folder is
    only named, and DuckDB makes it if it spills, so that a batch's driver leaves nothing in the
    temporary folder it shares with its workers (whose spill folders go with the batch's).
    """
    threads = threads or thread_count()
    config: dict[str, str | bool | int | float | list[str]] = {**OFFLINE}
    if threads is not None:
        config["threads"] = threads
    con = duckdb.connect(database, read_only=read_only, config=config)
    if spill_now:
        spill = tempfile.mkdtemp(prefix="npu-triage-spill-")
    else:
        spill = os.path.join(tempfile.gettempdir(), f"npu-triage-spill-{secrets.token_hex(8)}")
    weakref.finalize(con, shutil.rmtree, spill, ignore_errors=True)
    con.execute("SET temp_directory = ?", [spill])
    # DuckDB 2.0's type_pushdown moves a TRY_CAST of a CSV column into the reader, where it becomes a
    # plain cast: one 'N/A' cell then fails the whole file instead of giving NULL (seen on
    # kernel_details' Context ID). Readers rely on TRY_CAST, so the rewrite stays off.
    con.execute("SET disabled_optimizers = 'type_pushdown'")
    # DuckDB's own progress bar would print into the command's output (and a test's captured stdout).
    con.execute("SET enable_progress_bar = false")
    set_memory_limit(con, memory_limit_bytes() if limit_bytes is None else limit_bytes)
    return con


def set_memory_limit(con: duckdb.DuckDBPyConnection, limit_bytes: int) -> None:
    """DuckDB's memory limit of ``con`` from now on (a multi-rank job lowers it once found: job_ingest)."""
    con.execute("SET memory_limit = ?", [duckdb_setting(limit_bytes)])


@contextmanager
def fixed_order(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Within the block ``con`` runs on one thread, so that every float sum adds its terms in the same
    order (analyzer/job/fixed_order.py says why); its thread count is restored afterwards."""
    ((threads,),) = con.execute("SELECT current_setting('threads')").fetchall()
    if threads == 1:
        yield
        return
    con.execute("SET threads = 1")
    try:
        yield
    finally:
        con.execute(f"SET threads = {int(threads)}")


def close_to_files(con: duckdb.DuckDBPyConnection, lock_settings: bool = False) -> None:
    """From now on, no SQL on ``con``'s database (any of its connections) reaches a file (the sandbox).

    ``lock_settings`` also freezes every setting (memory limit, threads): for a connection that only
    runs the user's SQL (`query`), not for one the program goes on using (a diagnosis draws its
    report after the rules, under its own memory settings).
    """
    con.execute("SET enable_external_access = false")
    if lock_settings:
        con.execute("SET lock_configuration = true")


def is_duckdb_file(path: Path | str) -> bool:
    """True when the file starts like a DuckDB database (checked before DuckDB opens it, so that an
    SQLite or other file is never handed to DuckDB, which would look for an extension to read it)."""
    try:
        with open(path, "rb") as f:
            return f.read(12)[8:12] == DUCKDB_MAGIC
    except OSError:
        return False
