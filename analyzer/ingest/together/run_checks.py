"""The checks each CSV reader runs on a run's inserted rows (duplicates, negative times, unusable rows),
asked of many runs at once: the runs where any would say something."""

from __future__ import annotations

import duckdb

from analyzer.ingest.csv.csv_group import GroupRead
from analyzer.ingest.schema import TABLES
from analyzer.ingest.sql_values import IN_RUNS

# Runs per query: the distinct counts' hash tables stay small.
_RUNS_PER_QUERY = 256


def runs_to_recheck(con: duckdb.DuckDBPyConnection, read: GroupRead, runs: list[str]) -> set[str]:
    """Of ``runs``, those whose rows in the kind's table a per-run check would report on."""
    columns = TABLES[read.table].column_names()
    key = ", ".join(read.key or [c for c in columns if c != "run_id"])
    # row_checks.drop_duplicate_rows, told by each row's hash: a third of the work of telling whole rows apart.
    # Equal rows hash alike; two rows whose hashes collide only send their run to the per-run checks, which
    # find no duplicate there and read it as before.
    said = [f"count(*) > count(DISTINCT hash({key}))"]
    said += [f"count(*) FILTER (WHERE {c} < 0) > 0" for c in read.times if c in columns]
    if read.unusable:
        said.append(f"count(*) FILTER (WHERE {read.unusable}) > 0")
    sql = f"SELECT run_id FROM {read.table} WHERE {IN_RUNS} GROUP BY run_id HAVING {' OR '.join(said)}"
    found: set[str] = set()
    for start in range(0, len(runs), _RUNS_PER_QUERY):
        found |= {r[0] for r in con.execute(sql, {"runs": runs[start : start + _RUNS_PER_QUERY]}).fetchall()}
    return found
