"""Create the helper views of the .sql modules in a connection, kept while their inputs are unchanged."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from typing import Any

import duckdb

from analyzer.row_inserts import insert_values
from analyzer.rule_engine.chip_table import NOMINAL_KEYS, chip_table_rows
from analyzer.rule_engine.views.definitions import helper_definitions, helpers_read
from analyzer.rule_engine.views.empty_tables import empty_sources, known_empty

# What the helper views are derived from; when it has not changed since the last call, they are kept.
# Timeline rows (millions, only appended by ingest) are summed, not hashed: hashing their names would
# cost more than the views it saves on a big export.
_SIGNATURE_SQL = """
SELECT (SELECT count(*) || ':' || coalesce(sum(hash(run_id, device_id, stream_id, step_id, task_type, op_type,
                                                    op_name, start_ns, end_ns)), 0) FROM ops)
    || '/' || (SELECT count(*) || ':' || coalesce(sum(hash(s)), 0) FROM steps s)
    || '/' || (SELECT count(*) || ':' || coalesce(sum(start_ns), 0) || ':' || coalesce(sum(end_ns), 0)
               FROM timeline)
    || '/' || (SELECT count(*) || ':' || coalesce(sum(hash(m)), 0) FROM memory_records m)
    || '/' || (SELECT count(*) || ':' || coalesce(sum(hash(o)), 0) FROM op_memory o)"""

_STATE_EXISTS = "SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = '_helper_views_state'"


def _create_chip_table(con: duckdb.DuckDBPyConnection, overrides: dict[str, Any]) -> None:
    """The TEMP table ``_chip_table`` that ``_run_nominal`` reads (views/chip.sql), overrides applied."""
    rows = chip_table_rows(overrides)
    columns = ["chip VARCHAR", *(f"{k} DOUBLE" for k in NOMINAL_KEYS), "is_default BOOLEAN"]
    columns.append("ai_core_count_set BOOLEAN")
    con.execute(f"CREATE OR REPLACE TEMP TABLE _chip_table ({', '.join(columns)})")
    insert_values(con, "_chip_table", rows)


def create_views(
    con: duckdb.DuckDBPyConnection, chip: dict[str, Any] | None = None, needs: Iterable[str] | None = None
) -> None:
    """Create the helper macros and relations, visible to ``con`` under their names (nothing is written into a
    database file): every one, or with ``needs`` (SQL texts: a set of rules') those the texts name and those
    they read. Those an earlier call made are kept.

    Definitions marked ``@view`` stay views; ``@table`` ones are computed once into TEMP tables, in
    dependency order, and recomputed on a later call only when ops, steps, timeline, memory_records or
    op_memory changed, or when
    ``chip`` (overrides of the chip table, ``--set chip.KEY=VALUE``, checked by
    chip_table.check_chip_overrides) is given and differs from the last call's; without ``chip``, the
    last call's overrides are kept.
    """
    data = con.execute(_SIGNATURE_SQL).fetchall()[0][0]
    state = con.execute(_STATE_EXISTS).fetchall()[0][0]
    last = con.execute("SELECT signature, chip, made FROM _helper_views_state").fetchall()[0] if state else None
    chip_text = json.dumps(sorted(chip.items())) if chip is not None else (last[1] if last else "[]")
    made = set(last[2]) if last else set()
    wanted = {d.name for d in helper_definitions()} if needs is None else set(helpers_read(needs))
    if last and last[:2] == (data, chip_text):
        wanted -= made
        if not wanted:
            return
    else:  # what was made before is made again, so that no helper holds what the tables held before
        wanted |= made
        _create_chip_table(con, dict(json.loads(chip_text)))
    _create_definitions(con, wanted)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _helper_views_state AS"
        " SELECT ?::VARCHAR AS signature, ?::VARCHAR AS chip, ?::VARCHAR[] AS made",
        [data, chip_text, sorted(made | wanted)],
    )


def _create_definitions(con: duckdb.DuckDBPyConnection, names: Collection[str]) -> None:
    """The helpers ``names`` in dependency order; a table whose inputs are all empty made empty without its
    query (``empty_tables.py``)."""
    empty = empty_sources(con)
    for definition in helper_definitions():
        if definition.name in names:
            statement = known_empty(definition.name, empty) if definition.kind == "table" else None
            con.execute(statement or definition.create_statement())
