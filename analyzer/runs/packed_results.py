"""A worker's results sent to the driver packed: each catalog table of all its runs as one table, split again there.

A chunk's result is a list of small tables per run (a run's findings, its op type stats, ...),
and pickling an Arrow table costs per column and per chunk, not per row: a chunk of a hundred
runs sent run by run pickles thousands of columns, in the worker and again in the driver. Packed,
each table name (and schema) crosses once, in one chunk per column; the driver gets every run's
tables back as slices of those, the same rows in the same order, without a copy.
"""

from __future__ import annotations

import pyarrow as pa

from analyzer.runs.work import RunTables

# per run, per table name: (which of the packed tables, first row, row count)
_Layout = list[dict[str, tuple[int, int, int]]]


class PackedResults(list):
    """A worker's results (``RunTables`` per item, in order) that are packed when pickled; unpickled, a plain
    list of the same tables. Used where no pickling happens (a pool of one), it is that list as it is."""

    def __reduce__(self) -> tuple[object, tuple[_Layout, list[pa.Table]]]:
        return _unpacked, _packed(self)


def _packed(results: list[RunTables]) -> tuple[_Layout, list[pa.Table]]:
    """Every run's tables of one name and schema concatenated into one table of one chunk per column, and
    where each run's rows are in them."""
    keys: list[tuple[str, pa.Schema]] = []
    parts: list[list[pa.Table]] = []
    held: list[int] = []  # rows in each packed table so far
    layout: _Layout = []
    for tables in results:
        where = {}
        for name, table in tables.items():
            n = _slot(keys, name, table.schema)
            if n == len(parts):
                parts.append([])
                held.append(0)
            parts[n].append(table)
            where[name] = (n, held[n], table.num_rows)
            held[n] += table.num_rows
        layout.append(where)
    return layout, [pa.concat_tables(tables).combine_chunks() for tables in parts]


def _slot(keys: list[tuple[str, pa.Schema]], name: str, schema: pa.Schema) -> int:
    """The index of (``name``, ``schema``) among ``keys``, appended when new: a name may come in several schemas
    (a job rank's findings bring columns of their own)."""
    for n, (known, known_schema) in enumerate(keys):
        if known == name and known_schema.equals(schema, check_metadata=True):
            return n
    keys.append((name, schema))
    return len(keys) - 1


def _unpacked(layout: _Layout, packed: list[pa.Table]) -> list[RunTables]:
    """Each run's tables again, as slices of the packed tables."""
    return [{name: packed[n].slice(start, rows) for name, (n, start, rows) in where.items()} for where in layout]
