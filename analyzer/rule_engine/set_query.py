"""One rule query for many runs: the rule's SQL run once per run inside a LATERAL join, rows split per run.

DuckDB decorrelates the LATERAL subquery, so the rule's tables are scanned once for all the runs instead of
once per run, while each run keeps the rule's own semantics ($run_id bound to it: CTEs, window functions,
LIMIT per run). Only the order of a run's rows is not kept; the runner copes with that (runner.py).
"""

from __future__ import annotations

import re
from typing import Any

import duckdb

from analyzer.duckdb_connect import fixed_order
from analyzer.rule_engine.validation import sql_params

# The filter of a query over many runs, their ids bound to $runs.

# Where the runs come from inside the set query; $run_id / $run_ids of a scope-'run' rule become its column.
RUNS_ALIAS = "__triage_runs"
_RUN = f"{RUNS_ALIAS}.__run"
_SET_SQL = (
    f"SELECT {_RUN} AS __run, q.* FROM (SELECT unnest($__runs::VARCHAR[]) AS __run) {RUNS_ALIAS}, "
    "LATERAL (\n{sql}\n) q"
)

# Things to step over whole (a $name inside them is not a parameter), then the parameters of one run.
_TOKENS = re.compile(
    r"""(?P<skip>'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|/\*.*?\*/)|\$(?P<param>run_ids?|subject)(?![A-Za-z0-9_])""",
    re.DOTALL,
)
_REPLACEMENT = {"run_id": _RUN, "run_ids": f"[{_RUN}]", "subject": f"{RUNS_ALIAS}.__subject"}
_RENAMED = re.compile(r"^(?P<stem>.+)_\d+$")


def for_every_run(sql: str, subject: bool = False) -> str:
    """The rule's SQL as the LATERAL side of the set query: its ``$run_id`` the run's column, ``$run_ids``
    the list of that one run (as the runner binds them for one run), with ``subject`` also ``$subject``
    the finding's subject column (an evidence query); literals, quoted names and comments left as they are.

    >>> for_every_run("SELECT '$run_id' AS a, $run_ids AS b FROM t WHERE run_id = $run_id -- $run_id")
    "SELECT '$run_id' AS a, [__triage_runs.__run] AS b FROM t WHERE run_id = __triage_runs.__run -- $run_id"
    """

    def replace(match: re.Match[str]) -> str:
        param = match.group("param")
        if match.group("skip") or (param == "subject" and not subject):
            return match.group(0)
        return _REPLACEMENT[param]

    return _TOKENS.sub(replace, sql.rstrip().rstrip(";"))


def set_sql(sql: str) -> str:
    """The query that runs ``sql`` once for each run of the parameter ``$__runs`` (column ``__run`` first)."""
    return _SET_SQL.format(sql=for_every_run(sql))


def rows_by_run(
    con: duckdb.DuckDBPyConnection, sql: str, binding: dict[str, Any], run_ids: list[str]
) -> tuple[list[str], dict[str, list[tuple[Any, ...]]]] | None:
    """(columns, rows of each run) of the rule query ``sql`` run for every run of ``run_ids`` in one query;
    None when the set query fails or renamed a duplicate column (then the rule is run per run, as alone).
    ``binding``: the rule's other parameters (those the set query does not use are left out)."""
    query = set_sql(sql)
    used = sql_params(query)
    params = {k: v for k, v in binding.items() if k in used}
    try:
        # One thread: a run's rows then reach each float sum in the order its own query adds them, so that
        # a number the rule returns is the same to its last digit as when the run is judged alone.
        with fixed_order(con):
            cursor = con.execute(query, {**params, "__runs": run_ids})
            names = [d[0] for d in cursor.description]
            rows = cursor.fetchall()
    except duckdb.Error:
        return None
    columns = names[1:]
    if any((m := _RENAMED.match(c)) and m.group("stem") in names for c in columns):
        return None  # DuckDB renamed a column the rule returns twice (or one named like the run column)
    return columns, split_by_run(rows, run_ids)


def split_by_run(rows: list[tuple[Any, ...]], run_ids: list[str]) -> dict[str, list[tuple[Any, ...]]]:
    """The rows of each run of ``run_ids`` (every run, [] for one without rows), their first column
    (the run) left out; the rows of a run in the order they came."""
    found: dict[str, list[tuple[Any, ...]]] = {r: [] for r in run_ids}
    for row in rows:
        found[row[0]].append(row[1:])
    return found
