"""Which columns hold data for which runs: the rules' ``requires`` prechecks, asked in one query."""

from __future__ import annotations

from collections.abc import Iterable

import duckdb

from analyzer.ingest.sql_values import in_list
from analyzer.rule_engine.model import Rule

# (table, column, runs); the table 'counters:hbm_read' means the counters rows of 'hbm_read'.
Key = tuple[str, str, tuple[str, ...]]


def required_keys(rule: Rule, run_ids: tuple[str, ...]) -> list[Key]:
    """The (table, column, runs) whose data ``rule`` requires on these runs."""
    return [(table, column, run_ids) for table, cols in rule.requires.items() for column in cols]


class Availability:
    """Whether a column holds any non-NULL value for some runs; cached per (table, column, runs)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con
        self._seen: dict[Key, bool] = {}

    def missing(self, rule: Rule, run_ids: tuple[str, ...]) -> list[str]:
        """'table.column' of every requirement of ``rule`` that these runs do not meet."""
        keys = required_keys(rule, run_ids)
        try:  # most were answered by one prefetch of all: each key looked up once
            return [f"{table}.{column}" for table, column, runs in keys if not self._seen[table, column, runs]]
        except KeyError:
            self.prefetch(keys)
        return [f"{table}.{column}" for table, column, runs in keys if not self._seen[table, column, runs]]

    def prefetch(self, keys: Iterable[Key]) -> None:
        """Answer every key not known yet: in one query the keys of several runs, and those asked of one run alone
        (one scan of a table for all its columns asked about for the same runs); one query per table for the
        columns asked about for each of several runs alone (one scan grouped by run)."""
        todo = [key for key in dict.fromkeys(keys) if key not in self._seen]
        if not todo:
            return
        each: dict[tuple[str, str], list[str]] = {}
        for table, column, run_ids in todo:
            if len(run_ids) == 1:
                each.setdefault((table, column), []).append(run_ids[0])
        per_run: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for (table, column), runs in each.items():
            if len(runs) > 1:
                per_run.setdefault((table, tuple(runs)), []).append(column)
        together = [key for key in todo if len(key[2]) > 1 or len(each.get(key[:2], ())) == 1]
        if together:
            groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
            for table, column, run_ids in together:
                groups.setdefault((table, run_ids), []).append(column)
            params: dict[str, object] = {}
            items = [_item(table, cols, of, n, params) for n, ((table, of), cols) in enumerate(groups.items())]
            row = self._con.execute(f"SELECT {', '.join(items)}", params).fetchall()[0]
            for ((table, of), cols), flags in zip(groups.items(), row, strict=True):
                self._seen.update(((table, column, of), flag) for column, flag in zip(cols, flags, strict=True))
        for (table, asked), columns in per_run.items():
            self._each_run(table, columns, asked)

    def _each_run(self, table: str, columns: list[str], runs: tuple[str, ...]) -> None:
        """Whether each of ``runs`` alone has a value in each of ``columns`` of ``table``: one scan, grouped by
        run (a subquery per column scanned the table once for each)."""
        params: dict[str, object] = {}
        counts, source = _counted(table, columns, runs, params)
        rows = self._con.execute(f"SELECT run_id, {counts} {source} GROUP BY run_id", params)
        having = {run: flags for run, *flags in rows.fetchall()}
        none = (False,) * len(columns)
        for r in runs:
            flags = having.get(r, none)
            self._seen.update(((table, column, (r,)), flag) for column, flag in zip(columns, flags, strict=True))


def _item(table: str, columns: list[str], run_ids: tuple[str, ...], n: int, params: dict[str, object]) -> str:
    """The query item for the ``columns`` of one table asked about for the same runs (its parameters added to
    ``params``, named with ``n``): whether the runs together have a value in each, one scan of the table for all
    of them. A LIMIT 1 subquery per column stops at the first value, but each is planned apart, and on the small
    exports most runs are the planning is what costs; on millions of tasks the one scan costs a little more."""
    counts, source = _counted(table, columns, run_ids, params, str(n))
    return f"(SELECT [{counts}] {source})"


def _counted(
    table: str, columns: list[str], run_ids: tuple[str, ...], params: dict[str, object], suffix: str = ""
) -> tuple[str, str]:
    """Whether each of ``columns`` holds a value (``count(column) > 0``, comma-separated), and the FROM ... WHERE
    of the rows of ``run_ids`` in ``table`` ('counters:NAME': the counters rows of NAME) it counts; the parameters,
    named with ``suffix``, added to ``params``."""
    name, _, counter = table.partition(":")
    where = in_list("run_id", f"$runs{suffix}")
    params[f"runs{suffix}"] = list(run_ids)
    if counter:
        where += f" AND counter = $counter{suffix}"
        params[f"counter{suffix}"] = counter
    return ", ".join(f'count("{column}") > 0' for column in columns), f"FROM {name} WHERE {where}"
