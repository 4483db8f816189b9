"""Materialize dependent helper relations two at a time (or one), in an in-memory catalog of their own.

A TEMP table is visible only to the connection that made it, so helpers computed on two connections
at once live as tables in an attached in-memory catalog (never in the database file, if any) and are
shown to the calling connection as TEMP views of the same names. Most helpers are window passes over
one partition, which DuckDB runs on one thread: two at a time keep both cores busy, unless the
database already holds more on disk than its memory budget (``workers_for``).
"""

from __future__ import annotations

import re
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

import duckdb

from analyzer.ingest.memory_budget import current_limit_bytes

CATALOG = "npu_helpers"
_WORKERS = 2


def dependencies(relations: dict[str, str]) -> dict[str, set[str]]:
    """Name -> the earlier relations its SQL reads (relations are listed in dependency order)."""
    names = list(relations)
    return {
        name: {other for other in names[:i] if re.search(rf"(?<![\w.]){re.escape(other)}\b", relations[name])}
        for i, name in enumerate(names)
    }


def chain_lengths(deps: dict[str, set[str]]) -> dict[str, int]:
    """Name -> how many relations at most are built one after another from it on (itself included).

    One pass, last relation first: ``deps`` lists relations in dependency order, so every reader
    of a relation comes after it and already has its length."""
    lengths: dict[str, int] = {}
    for name in reversed(deps):
        readers = [other for other, reads in deps.items() if name in reads]
        lengths[name] = 1 + max((lengths[other] for other in readers), default=0)
    return lengths


def workers_for(con: duckdb.DuckDBPyConnection) -> int:
    """How many relations to compute at once on ``con``'s database: two, or one when more of it is
    spilled to disk than its memory limit holds (DuckDB's count of spilled bytes, which it may
    compress). The helpers sort ops; two at once then evict each other's blocks and both re-read
    them from disk. Measured under lean: msprof 2M tasks (1.7 GiB spilled, a 406 MiB limit) 11.5 s
    for the helpers two at a time, 10.1 s one at a time; msprof 1M tasks (0.75 GiB, 448 MiB) the
    same either way; torch_npu 105k tasks (66 MiB, 129 MiB) 0.77 s two at a time, 0.95 s one at a
    time."""
    spilled = con.execute("SELECT coalesce(sum(temporary_storage_bytes), 0) FROM duckdb_memory()").fetchall()[0][0]
    limit = current_limit_bytes(con)
    return 1 if limit is not None and spilled > limit else _WORKERS


def build_relations(con: duckdb.DuckDBPyConnection, relations: dict[str, str], plain: tuple[str, ...]) -> None:
    """Create every relation on ``con``: ``plain`` ones as TEMP views, the others computed once into
    tables of CATALOG (as many at once as their dependencies allow and ``workers_for`` says, those
    heading the longest chains of relations first, so the last ones of a chain do not run alone at
    the end) and shown as TEMP views."""
    con.execute(f"ATTACH IF NOT EXISTS ':memory:' AS {CATALOG}")
    tables = [name for name in relations if name not in plain]
    _drop_temp(con, list(relations))
    for name in plain:
        con.execute(f"CREATE TEMP VIEW {name} AS {relations[name]}")
    cursors = [worker(con, relations, plain) for _ in range(min(workers_for(con), len(tables)) or 1)]
    deps = dependencies(relations)
    lengths = chain_lengths(deps)
    tables = sorted(tables, key=lambda name: -lengths[name])
    try:
        _compute_tables(cursors, tables, relations, deps, set(plain))
    finally:
        for cursor in cursors:
            cursor.close()
    for name in tables:
        con.execute(f"CREATE TEMP VIEW {name} AS SELECT * FROM {CATALOG}.main.{name}")


def _drop_temp(con: duckdb.DuckDBPyConnection, names: list[str]) -> None:
    """Drop the TEMP views and tables of these names (one catalog query for all of them)."""
    kinds = con.execute(
        "SELECT 'VIEW', view_name FROM duckdb_views() WHERE temporary AND view_name IN (SELECT unnest($n)) "
        "UNION ALL SELECT 'TABLE', table_name FROM duckdb_tables() "
        "WHERE temporary AND table_name IN (SELECT unnest($n))",
        {"n": names},
    ).fetchall()
    for what, name in kinds:
        con.execute(f"DROP {what} IF EXISTS {name}")


def worker(
    con: duckdb.DuckDBPyConnection, relations: dict[str, str], plain: tuple[str, ...]
) -> duckdb.DuckDBPyConnection:
    """A second connection to ``con``'s database resolving the normalized tables, the ``plain``
    views (created on it) and CATALOG's tables (once ``build_relations`` has made them)."""
    main = con.execute("SELECT current_database()").fetchall()[0][0]
    cursor = con.cursor()
    cursor.execute(f"SET search_path = '{main}.main,{CATALOG}.main'")
    for name in plain:
        cursor.execute(f"CREATE TEMP VIEW {name} AS {relations[name]}")
    return cursor


def _compute_tables(
    cursors: list[duckdb.DuckDBPyConnection],
    tables: list[str],
    relations: dict[str, str],
    deps: dict[str, set[str]],
    ready: set[str],
) -> None:
    """Run each table's CREATE on a free connection once what it reads is done; the first failure
    is raised after the running ones finish."""
    pending, free = list(tables), list(cursors)
    running: dict[Future, tuple[str, duckdb.DuckDBPyConnection]] = {}
    with ThreadPoolExecutor(max_workers=len(cursors)) as pool:
        while pending or running:
            for name in [n for n in pending if deps[n] <= ready]:
                if not free:
                    break
                cursor = free.pop()
                pending.remove(name)
                sql = f"CREATE OR REPLACE TABLE {CATALOG}.main.{name} AS {relations[name]}"
                running[pool.submit(cursor.execute, sql)] = (name, cursor)
            if not running:
                raise ValueError(f"helper relations with unmet dependencies: {', '.join(pending)}")
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                name, cursor = running.pop(future)
                future.result()
                ready.add(name)
                free.append(cursor)
