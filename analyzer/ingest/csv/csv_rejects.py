"""Rows of a CSV file that do not fit its header: repeated header rows, cells that are not of the header's
type, more cells than the header names; counted, reported by line and column, and the judgement
whether the file is read without them or refused."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from analyzer.errors import first_line
from analyzer.ingest.model import ReadContext

# A file loses its rows that do not fit the header, up to this share of its rows (and never for one row
# alone); beyond it the header does not describe the data and the file is refused.
REFUSE_SHARE = 0.05
_LISTED = 20


@dataclass(frozen=True)
class Rejects:
    """What a read's rejects table holds: rows that repeat the header, and the other misfits."""

    table: str
    repeated_headers: int
    misfits: int

    def refuses(self, kept_rows: int) -> bool:
        """Whether so many rows do not fit that the file must be refused."""
        total = kept_rows + self.misfits
        return self.misfits > 1 and self.misfits > REFUSE_SHARE * total


def count_rejects(con: duckdb.DuckDBPyConnection, table: str, header: str) -> Rejects:
    """Count the rows of rejects ``table`` that repeat the ``header`` line and the others (one per line).

    Most files have none: a plain count says so, cheaper to plan than the two distinct counts."""
    if not con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]:
        return Rejects(table, 0, 0)
    repeated, misfits = con.execute(
        f"SELECT count(DISTINCT line) FILTER (WHERE {_is_header()}), "
        f"count(DISTINCT line) FILTER (WHERE NOT {_is_header()}) FROM {table}",
        {"header": header.strip()},
    ).fetchall()[0]
    return Rejects(table, repeated, misfits)


def _is_header() -> str:
    return "coalesce(trim(csv_line, ' \r\n') = $header, false)"


def report_refusal(
    con: duckdb.DuckDBPyConnection, path: Path, rejects: Rejects, kept_rows: int, header: str, ctx: ReadContext
) -> None:
    """One error naming the first misfit's line and column, the share of misfits and the header."""
    line, column, message = con.execute(
        f"SELECT line, column_name, error_message FROM {rejects.table} WHERE NOT {_is_header()} "
        "ORDER BY line, column_idx LIMIT 1",
        {"header": header.strip()},
    ).fetchall()[0]
    where = f"line {line}" + (f", column {column!r}" if column else "")
    total = kept_rows + rejects.misfits
    ctx.report(
        path,
        where,
        "error",
        f"{rejects.misfits} of {total} rows do not fit the header ({_first_line(message)}); "
        f"the header does not describe the data, file skipped. Header: {header[:300]}",
        "a hand-edited or mis-merged file (a column added or removed in the header only); re-export it",
    )


def report_rejects(con: duckdb.DuckDBPyConnection, path: Path, rejects: Rejects, header: str, ctx: ReadContext) -> None:
    """Report repeated header rows (one count) and each row skipped for not fitting the header."""
    if rejects.repeated_headers:
        ctx.report(
            path,
            "",
            "warning",
            f"{rejects.repeated_headers} repeated header rows inside the data dropped",
            "files concatenated with their headers; nothing else is lost",
        )
    if not rejects.misfits:
        return
    rows = con.execute(
        f"SELECT line, any_value(error_type ORDER BY column_idx), any_value(column_name ORDER BY column_idx), "
        f"any_value(error_message ORDER BY column_idx) FROM {rejects.table} WHERE NOT {_is_header()} "
        f"GROUP BY line ORDER BY line LIMIT {_LISTED}",
        {"header": header.strip()},
    ).fetchall()
    for line, etype, column, message in rows:
        where = f"line {line}" + (f", column {column!r}" if column and etype == "CAST" else "")
        ctx.report(
            path,
            where,
            "warning",
            f"row skipped ({etype}): {_first_line(message)}",
            "a row that does not fit the header, e.g. an unescaped comma in an op name or text in a number column",
        )
    if rejects.misfits > len(rows):
        ctx.report(path, "", "warning", f"{rejects.misfits - len(rows)} more rows skipped for the same kind of reason")


def _first_line(message: object) -> str:
    return first_line(str(message), 200) if message else ""
