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
        if not all(key in self._seen for key in keys):  # most were answered by one prefetch of all
            self.prefetch(keys)
        return [f"{table}.{column}" for table, column, runs in keys if not self._seen[table, column, runs]]

    def prefetch(self, keys: Iterable[Key]) -> None:
        """Answer every key not known yet, all in one query (one round trip instead of one per column): a
        column asked about for each of several runs alone is one scan for all of them."""
        todo = [key for key in dict.fromkeys(keys) if key not in self._seen]
        if not todo:
            return
        each: dict[tuple[str, str], list[str]] = {}
        for table, column, run_ids in todo:
            if len(run_ids) == 1:
                each.setdefault((table, column), []).append(run_ids[0])
        per_run = [(table, column, tuple(runs)) for (table, column), runs in each.items() if len(runs) > 1]
        together = [key for key in todo if len(key[2]) > 1 or len(each.get(key[:2], ())) == 1]
        params: dict[str, object] = {}
        items = [_item(key, n, params, "has") for n, key in enumerate(together)]
        items += [_item(key, n, params, "which") for n, key in enumerate(per_run, start=len(together))]
        row = self._con.execute(f"SELECT {', '.join(items)}", params).fetchall()[0]
        self._seen.update(zip(together, row[: len(together)], strict=True))
        for (table, column, runs), having in zip(per_run, row[len(together) :], strict=True):
            having = set(having or ())
            self._seen.update(((table, column, (r,)), r in having) for r in runs)


def _item(key: Key, n: int, params: dict[str, object], answer: str) -> str:
    """The query item for ``key`` (its parameters added to ``params``): whether the runs together have a
    value ('has'), or the list of the runs that each have one ('which')."""
    table, column, run_ids = key
    name, _, counter = table.partition(":")
    where = f'"{column}" IS NOT NULL AND ' + in_list("run_id", f"$runs{n}")
    params[f"runs{n}"] = list(run_ids)
    if counter:
        where += f" AND counter = $counter{n}"
        params[f"counter{n}"] = counter
    if answer == "which":
        return f"(SELECT list(DISTINCT run_id) FROM {name} WHERE {where})"
    # LIMIT 1: each scan stops at the first non-NULL value instead of counting them all.
    return f"(SELECT count(*) FROM (SELECT 1 FROM {name} WHERE {where} LIMIT 1)) > 0"
