"""Cells of a CSV number column that hold no number: each column's count, read as missing and named.

An exporter, a spreadsheet or a script may spell a missing value 'NA', 'null', '-', 'None' or '#N/A',
or write text where a number belongs ('warmup' as a step id). That is a problem of those cells, not of
their rows nor of the file: the file is read as text, the cells become NULL under TRY_CAST, and each
column says how many of its cells were lost and how the first was written.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass

import duckdb

from analyzer.ingest.model import ReadContext
from analyzer.ingest.sql_values import ident

# Spellings of a missing value, as written by pandas, R, spreadsheets and shell scripts (compared lowercased).
MISSING_SPELLINGS = ("na", "n/a", "null", "none", "-", "#n/a", "nan", "nil")


def _lost(col: str, sql_type: str) -> str:
    """SQL true for a cell of ``col`` that holds something, yet not a number of ``sql_type``."""
    t = f"trim({ident(col)}, ' \t')"
    return f"({t} NOT IN ('', 'N/A') AND TRY_CAST({t} AS {sql_type}) IS NULL)"


def cells_sql(typed: dict[str, str]) -> str:
    """One row over the ``{scan}`` of a file read as text: per typed column, the cells lost, the first of
    them, those spelling a missing value, and the cells holding anything."""
    parts = []
    for col, sql_type in typed.items():
        lost = _lost(col, sql_type)
        spelt = f"lower(trim({ident(col)}, ' \t')) IN {MISSING_SPELLINGS!r}"
        held = f"trim({ident(col)}, ' \t') NOT IN ('', 'N/A')"
        parts += [
            f"count(*) FILTER (WHERE {lost})",
            f"min({ident(col)}) FILTER (WHERE {lost})",
            f"count(*) FILTER (WHERE {lost} AND {spelt})",
            f"count(*) FILTER (WHERE {held})",
        ]
    return f"SELECT {', '.join(parts)} FROM {{scan}}"


def _columns(typed: dict[str, str], counts: tuple) -> list[tuple[str, int, object, int, int]]:
    """(column, cells lost, the first, lost cells spelling a missing value, cells held) per typed column."""
    return [(col, *counts[4 * i : 4 * i + 4]) for i, col in enumerate(typed)]


def mostly_text(typed: dict[str, str], counts: tuple) -> str | None:
    """A column more than half of whose cells hold text that is no missing value: the header does not
    describe the data (swapped or shifted names), which is the file's problem, not its cells'."""
    for col, lost, _, spelt, held in _columns(typed, counts):
        if held and (lost - spelt) * 2 > held:
            return col
    return None


@dataclass(frozen=True)
class CellLines:
    """The first line of a lost cell per column, as the typed read's rejects table names them."""

    lines: dict[str, int]


def first_lines(con: duckdb.DuckDBPyConnection, rejects_table: str) -> dict[str, int]:
    return dict(con.execute(f"SELECT column_name, min(line) FROM {rejects_table} GROUP BY ALL").fetchall())


def report_cells(path, typed: dict[str, str], counts: tuple, lines: dict[str, int], ctx: ReadContext) -> int:
    """A warning per typed column with lost cells (``counts`` is the row of ``cells_sql``), at the first
    line ``lines`` names for it; returns the number of cells lost."""
    total = 0
    for col, lost, first, spelt, _ in _columns(typed, counts):
        if not lost:
            continue
        total += lost
        what = (
            "spell a missing value" if spelt == lost else "are not numbers" if not spelt else
            f"are not numbers ({spelt} of them spelling a missing value)"
        )  # fmt: skip
        ctx.report(
            path,
            (f"line {lines[col]}, " if col in lines else "") + f"column {col!r}",
            "warning",
            f"{lost} cells of {col!r} {what} (the first: {first!r}): read as missing; their rows are kept",
            "write missing values as empty cells, and only numbers in number columns",
        )
    return total


def casts_only(con: duckdb.DuckDBPyConnection, rejects_table: str, header_cells: int) -> bool:
    """Whether every row the typed read rejected was rejected for a cell not of its column's type, in a row
    of as many cells as the header (a row of more or fewer is shifted: its cells are under wrong names)."""
    rows = con.execute(
        f"SELECT bool_and(error_type = 'CAST'), list(DISTINCT csv_line)[:{_CHECKED_LINES}] FROM {rejects_table}"
    ).fetchall()[0]
    if not rows[0]:
        return False
    try:  # DuckDB keeps the line end before a line with the line
        return all(len(next(csv.reader([line.strip("\r\n")]), [])) == header_cells for line in rows[1])
    except csv.Error:  # a line break inside a quoted cell: not a row of simple cells
        return False


_CHECKED_LINES = 10_000  # the rejected lines whose cells are counted (a sample of a file wholly rejected)
