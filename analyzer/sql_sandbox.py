"""The one sandbox for SQL the user writes (`query`, rule files of `--rules`): no file is read or written.

DuckDB's ``enable_external_access = false`` closes every way out of the loaded tables: no COPY TO, no
ATTACH, no INSTALL or LOAD of an extension, no read_csv/read_text/glob of a file, no change of the
temporary folder. It cannot be switched back on while the database runs, so a statement of the
user's cannot undo it; DuckDB still spills to the temporary folder set before.
"""

from __future__ import annotations

import duckdb


def close_to_files(con: duckdb.DuckDBPyConnection, lock_settings: bool = False) -> None:
    """From now on, no SQL on ``con``'s database (any of its connections) reaches a file.

    ``lock_settings`` also freezes every setting (memory limit, threads): for a connection that only
    runs the user's SQL (`query`), not for one the program goes on using (a diagnosis draws its
    report after the rules, under its own memory settings).
    """
    con.execute("SET enable_external_access = false")
    if lock_settings:
        con.execute("SET lock_configuration = true")
