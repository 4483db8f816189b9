"""The rows of an SQLite table as an Arrow table: through ADBC's SQLite driver (C) when its types hold, else
through Python's sqlite3 module.

A profiler database holds millions of rows (TASK_PMU_INFO: a row per task and counter). Fetched by sqlite3,
every value becomes a Python object before it becomes Arrow: most of the load time of a database export.
ADBC's driver writes the Arrow columns itself, in C. Its one limit is types: it infers a column's type from a
batch of rows and fails on a value of another type in a later batch. The batch is made large, so a column
NULL over its first thousand rows still gets the type of its values. A table it still cannot take (a column
mixing storage classes across batches), and one whose values it would give otherwise than sqlite3
(``_as_sqlite3_gives``: a REAL among text, BLOBs), are fetched again by sqlite3, whose columns define the
result: ints and floats mixed become DOUBLE, other mixes text (``_unify``). Either way the same table comes
out; a column of NULLs only is typed NULL.
"""

from __future__ import annotations

import sqlite3

import pyarrow as pa
import pyarrow.compute as pc

# Rows the sqlite3 path fetches at a time; and ADBC's batch, whose rows it infers a column's type from.
BATCH_ROWS = 65536
ADBC_BATCH_ROWS = 1 << 20
_EXACT_INTEGERS = 2.0**53  # a double holds every integer below it
# The SQLite row id of each staged row (problems name it), when the table has one.
ROWID = "_rowid"


class ArrowConnection(sqlite3.Connection):
    """An sqlite3 connection that knows the URI it was opened with, so that ADBC's driver can open the same
    file (read-only, as it was) for the large tables; that second connection is opened once, on first use,
    and closed with this one."""

    uri: str | None = None
    _adbc = None

    def adbc(self):
        """ADBC's connection to the same file, or None when it cannot open it (the sqlite3 path is used)."""
        if self._adbc is None and self.uri is not None:
            try:
                import adbc_driver_sqlite.dbapi

                self._adbc = adbc_driver_sqlite.dbapi.connect(self.uri)
            except Exception:  # the driver missing or refusing the file: sqlite3 reads it, and reports why
                self.uri = None
        return self._adbc

    def close(self) -> None:
        if self._adbc is not None:
            self._adbc.close()
            self._adbc = None
        super().close()


def fetch_arrow(conn: sqlite3.Connection, table: str, where: str = "") -> pa.Table:
    """The rows of one SQLite table (those passing ``where``, an SQLite condition) as an Arrow table with
    their row id (ROWID) first, when it has one (sqlite3.Error when SQLite cannot read it)."""
    rows = f'FROM "{table}" WHERE ({where or "1"})'
    try:  # prepared, not run: a WITHOUT ROWID table has no row id
        conn.execute(f"SELECT rowid {rows} LIMIT 0")
        sql = f'SELECT rowid AS "{ROWID}", * {rows}'
    except sqlite3.OperationalError:
        sql = f"SELECT * {rows}"
    fast = _adbc_table(conn, sql, rows) if isinstance(conn, ArrowConnection) else None
    return fast if fast is not None else _sqlite3_table(conn, sql)


def _adbc_table(conn: ArrowConnection, sql: str, rows: str) -> pa.Table | None:
    """The table of ``sql`` through ADBC, None when it cannot give exactly what the sqlite3 path would (``rows``:
    the FROM and WHERE of the rows fetched, for ``_as_sqlite3_gives``)."""
    adbc = conn.adbc()
    if adbc is None:
        return None
    from adbc_driver_manager import Error

    cur = adbc.cursor()
    try:
        cur.adbc_statement.set_options(**{"adbc.sqlite.query.batch_rows": str(ADBC_BATCH_ROWS)})
        cur.execute(sql)
        arrow = cur.fetch_arrow_table()
    except (Error, OSError, pa.ArrowException):
        return None
    finally:
        cur.close()
    if not _as_sqlite3_gives(arrow, conn, rows):
        return None
    columns = zip(arrow.column_names, arrow.columns, strict=True)
    return pa.table({n: pa.nulls(len(c)) if c.null_count == len(c) else c for n, c in columns})


def _as_sqlite3_gives(arrow: pa.Table, conn: sqlite3.Connection, rows: str) -> bool:
    """The driver's values are those sqlite3 gives: no BLOB column (BLOBs, or values of several classes, as
    bytes); no REAL or BLOB among the values of a text column (the driver writes them as its own text:
    1.0e-05 where sqlite3 writes 1e-05), which SQLite is asked of the text columns only; and no REAL column
    holding a number beyond 2**53 (it may be an INTEGER among REALs, which the driver makes a REAL and sqlite3
    keeps exact, as text)."""
    if any(pa.types.is_binary(f.type) for f in arrow.schema):
        return False
    reals = [c for c in arrow.columns if pa.types.is_floating(c.type)]
    if any((pc.max(pc.abs(c)).as_py() or 0) >= _EXACT_INTEGERS for c in reals):
        return False
    texts = [f.name for f in arrow.schema if pa.types.is_string(f.type)]
    mixed = [f"""EXISTS (SELECT 1 {rows} AND typeof("{name}") IN ('real', 'blob'))""" for name in texts]
    return not mixed or not any(conn.execute(f"SELECT {', '.join(mixed)}").fetchone())


def _sqlite3_table(conn: sqlite3.Connection, sql: str) -> pa.Table:
    """The table of ``sql`` through sqlite3, in batches of BATCH_ROWS (sqlite3.Error when SQLite cannot read it)."""
    cur = conn.execute(sql)
    names = [d[0] for d in cur.description]
    columns: list[list[pa.Array]] = [[] for _ in names]
    while rows := cur.fetchmany(BATCH_ROWS):
        for i, values in enumerate(zip(*rows, strict=True)):
            columns[i].append(_column_array(values))
    if not columns or not columns[0]:
        return pa.table({n: pa.array([], pa.null()) for n in names})
    return pa.table({n: _unify(chunks) for n, chunks in zip(names, columns, strict=True)})


def _column_array(values: tuple) -> pa.Array:
    """One Arrow column from SQLite values; mixed or odd types fall back to text."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return pa.array([None if x is None else str(x) for x in values], pa.string())


def _unify(chunks: list[pa.Array]) -> pa.ChunkedArray:
    """Chunks of one column with one type: ints and floats become DOUBLE, other mixes text."""
    types = {c.type for c in chunks if not pa.types.is_null(c.type)}
    if len(types) <= 1:
        target = types.pop() if types else pa.null()
    elif all(pa.types.is_integer(t) or pa.types.is_floating(t) for t in types):
        target = pa.float64()
    else:
        target = pa.string()
    return pa.chunked_array([c.cast(target) for c in chunks], target)
