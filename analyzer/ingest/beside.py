"""One reader of an export reads on a cursor of its own, in a thread, while the others read.

The timeline JSON is an export's longest read. The readers before it (in READERS order, task_time
excepted, which reads first) fill none of its tables (timeline, counters), so reading it beside them
gives every table its rows, and every reader its problems, as reading one by one does. The two sides
share DuckDB's threads, half each: a scan spread over threads that the other side keeps busy only
costs more CPU.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import duckdb

# The kind read beside the others.
BESIDE = "timeline"


def beside_at(con: duckdb.DuckDBPyConnection, kinds: list[str]) -> int:
    """Where ``BESIDE`` is in ``kinds`` (the readers to run, in order) when it reads beside the ones before
    it: DuckDB has more than one thread. Else ``len(kinds)``: every reader runs one after the other."""
    return kinds.index(BESIDE) if BESIDE in kinds and _threads(con) > 1 else len(kinds)


def _threads(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute("SELECT current_setting('threads')").fetchall()[0][0]


@contextmanager
def reading_beside(
    con: duckdb.DuckDBPyConnection, read: Callable[[duckdb.DuckDBPyConnection], None] | None
) -> Iterator[None]:
    """While the block runs, ``read`` (when given) reads on a cursor of ``con``, in a thread, on half of
    DuckDB's threads; the block runs on the other half."""
    if read is None:
        yield
        return
    threads = _threads(con)
    cursor = con.cursor()
    con.execute("SET threads = ?", [max(1, threads // 2)])
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            reading = pool.submit(read, cursor)
            try:
                yield
            except BaseException:
                cursor.interrupt()  # a stop, or a failure of the other readers, ends this read too
                raise
            reading.result()
    finally:
        cursor.close()
        con.execute("SET threads = ?", [threads])
