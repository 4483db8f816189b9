"""INSERT statements into the normalized tables: BY NAME, with the run id as a parameter."""

from __future__ import annotations

from collections.abc import Mapping

import duckdb

from analyzer.ingest.model import ReadContext


def insert_params(ctx: ReadContext, constants: Mapping[str, object] | None = None) -> dict[str, object]:
    """The parameters of ``insert_sql``: the run id and the constants, in order."""
    return {"run_id": ctx.run_id, **constant_params(constants)}


def constant_params(constants: Mapping[str, object] | None) -> dict[str, object]:
    """The constants' parameters of ``insert_sql`` ($c0, ...)."""
    return {f"c{i}": value for i, value in enumerate((constants or {}).values())}


def insert_sql(
    table: str,
    inner_sql: str,
    constants: Mapping[str, object] | None = None,
    derived: Mapping[str, str] | None = None,
    helpers: list[str] | None = None,
    replaced: Mapping[str, str] | None = None,
    rows_run: bool = False,
) -> str:
    """INSERT INTO table BY NAME the rows of inner_sql, with the run of $run_id, constants ($c0, ...)
    and derived columns.

    ``helpers`` are inner columns (named ``_...``) used by ``derived`` and not inserted;
    ``replaced`` maps an inner column to an SQL expression that replaces its value. ``rows_run``: the
    inner rows carry their own ``run_id`` (a scan of many runs' files) instead of ``$run_id``.
    """
    star = f"* EXCLUDE ({', '.join(helpers)})" if helpers else "*"
    if replaced:
        star += f" REPLACE ({', '.join(f'{expr} AS {name}' for name, expr in replaced.items())})"
    outer = [star] if rows_run else ["$run_id::VARCHAR AS run_id", star]
    outer += [f"$c{i} AS {name}" for i, name in enumerate(constants or {})]
    outer += [f"{expr} AS {name}" for name, expr in (derived or {}).items()]
    return f"INSERT INTO {table} BY NAME SELECT {', '.join(outer)} FROM ({inner_sql})"


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, run_id: str, select: str, order: str = "") -> int:
    """INSERT the SELECT's rows into a normalized table BY NAME with the run id, in the ``order`` given (SQL of
    an ORDER BY: a SELECT joining tables gives its rows in an order DuckDB's join chooses, which on several
    threads changes from one run to the next); returns rows."""
    ordered = f"{select} ORDER BY {order}" if order else select
    return con.execute(insert_sql(table, ordered), {"run_id": run_id}).fetchall()[0][0]
