"""Checks every reader runs on the rows it inserted for a run: exact duplicate rows are dropped with a
count (``drop_exact_copies`` also serves the SQLite reader's staged tables), and negative times and
durations are named (each an SQL query over the table, no Python per row)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.ingest.model import ReadContext
from analyzer.ingest.schema import TABLES


def _data_columns(table: str) -> list[str]:
    return [c for c in TABLES[table].column_names() if c != "run_id"]


def drop_duplicate_rows(
    con: duckdb.DuckDBPyConnection, ctx: ReadContext, table: str, path: Path | str, key: tuple[str, ...] = ()
) -> int:
    """Delete the run's rows of ``table`` that repeat an earlier row exactly; one problem with the count.

    ``key`` (columns that tell rows apart) makes the common case cheap: only when two rows share a key
    are whole rows compared. Returns the rows dropped."""
    return drop_exact_copies(
        con,
        ctx,
        table,
        _data_columns(table),
        key=key,
        where="run_id = $run_id",
        args={"run_id": ctx.run_id},
        place=(path, ""),
        hint="files concatenated or a slice written twice; nothing else is lost",
    )


def drop_exact_copies(
    con: duckdb.DuckDBPyConnection,
    ctx: ReadContext,
    table: str,
    columns: list[str],
    *,
    key: tuple[str, ...] = (),
    order: str = "rowid",
    where: str = "TRUE",
    args: dict[str, object] | None = None,
    place: tuple[Path | str, str],
    hint: str,
) -> int:
    """Delete the rows of ``table`` (those ``where`` selects) that repeat an earlier one (by ``order``) in
    every one of ``columns``; one warning at ``place`` (file, location) with the count and ``hint``.

    Only when two rows share a ``key`` (by default every one of ``columns``) is the DELETE run (the
    common case stays one count, quicker to plan and to run than the DELETE's window). Returns the
    rows dropped."""
    same_key = f"SELECT count(*) - count(DISTINCT ({', '.join(key or columns)})) FROM {table} WHERE {where}"
    if not con.execute(same_key, args).fetchall()[0][0]:
        return 0
    copies = (
        f"SELECT {order} FROM (SELECT {order}, row_number() OVER (PARTITION BY {', '.join(columns)} ORDER BY {order}) "
        f"AS copy FROM {table} WHERE {where}) WHERE copy > 1"
    )
    dropped = con.execute(f"DELETE FROM {table} WHERE {where} AND {order} IN ({copies})", args).fetchall()[0][0]
    if dropped:
        ctx.report(*place, "warning", f"{dropped} exact duplicate rows dropped (each kept once)", hint)
    return dropped


def report_negative_times(
    con: duckdb.DuckDBPyConnection, ctx: ReadContext, table: str, path: Path | str, columns: tuple[str, ...]
) -> None:
    """One problem per column of ``columns`` (times ``_ns``, durations ``_us``) holding negative values in
    the run's rows of ``table``, with the count and the smallest value."""
    present = [c for c in columns if c in TABLES[table].column_names()]
    if not present:
        return
    counts = ", ".join(f"count(*) FILTER (WHERE {c} < 0), min({c})" for c in present)
    found = con.execute(f"SELECT {counts} FROM {table} WHERE run_id = $run_id", {"run_id": ctx.run_id}).fetchall()[0]
    for i, column in enumerate(present):
        negative, smallest = found[2 * i], found[2 * i + 1]
        if negative:
            what = "time" if column.endswith("_ns") else "duration"
            ctx.report(
                path,
                f"column {column}",
                "warning",
                f"{negative} rows have a negative {what} (smallest {smallest}); "
                "they are kept but their times are not trustworthy",
                "the export is corrupt there, or its clock was not set; re-export it",
            )
