"""The operator whose task failed: log error records naming a device task, linked to the ops (links.sql)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import duckdb

from analyzer.ingest.sql_values import in_list
from analyzer.row_inserts import insert_values
from analyzer.rule_engine.runner import plain_value
from analyzer.rule_engine.set_query import split_by_run
from analyzer.sql_modules import SqlDefinition, parse_module

_ATTACH = "CREATE TEMP TABLE IF NOT EXISTS _log_attach (log_run_id VARCHAR, run_id VARCHAR, offset_min INTEGER)"
_EXISTS = "SELECT count(*) FROM duckdb_views() WHERE view_name = '_log_failed_ops'"
_ROWS = f"""
SELECT run_id AS __run, * EXCLUDE (run_id, first_time), strftime(first_time, '%Y-%m-%d %H:%M:%S.%f') AS first_time
FROM _log_failed_ops WHERE {in_list("run_id")}
ORDER BY run_id, first_time, log_run_id, stream_id, task_id, op_name
"""


@cache
def link_definitions() -> tuple[SqlDefinition, ...]:
    """The views of links.sql, in file order (each reads only those before it)."""
    text = resources.files(__package__).joinpath("links.sql").read_text("utf-8")
    return tuple(parse_module(text, "links")[1])


def attach_links(con: duckdb.DuckDBPyConnection, log_run_id: str, run_ids: list[str], offset_min: int) -> None:
    """Record that the logs ``log_run_id`` belong to the profiled ``run_ids`` (their clock ``offset_min``
    minutes ahead of UTC) and create the views that link their failed tasks to the runs' operators."""
    con.execute(_ATTACH)
    insert_values(con, "_log_attach", [(log_run_id, r, offset_min) for r in run_ids])  # none: a job of summaries
    for definition in link_definitions():
        con.execute(definition.create_statement())


def failed_operators_of(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, tuple[dict[str, Any], ...]]:
    """Per run, its operators whose task failed, each with its error records (see links.sql, _log_failed_ops),
    read with one query for all the runs; () when no logs are attached to the connection."""
    if not con.execute(_EXISTS).fetchall()[0][0]:
        return dict.fromkeys(run_ids, ())
    cursor = con.execute(_ROWS, [run_ids])
    names = [d[0] for d in cursor.description][1:]
    found = split_by_run(cursor.fetchall(), run_ids)
    return {
        r: tuple({n: plain_value(v) for n, v in zip(names, row, strict=True)} for row in rows)
        for r, rows in found.items()
    }
