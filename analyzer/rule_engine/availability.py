"""Which columns hold data for which runs: the rules' ``requires`` prechecks, asked in one query."""

from __future__ import annotations

from collections.abc import Iterable

import duckdb

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
        self.prefetch(keys)
        return [f"{table}.{column}" for table, column, runs in keys if not self._seen[table, column, runs]]

    def prefetch(self, keys: Iterable[Key]) -> None:
        """Answer every key not known yet, all in one query (one round trip instead of one per column)."""
        todo = [key for key in dict.fromkeys(keys) if key not in self._seen]
        if not todo:
            return
        items: list[str] = []
        params: dict[str, object] = {}
        for n, (table, column, run_ids) in enumerate(todo):
            name, _, counter = table.partition(":")
            where = f'"{column}" IS NOT NULL AND run_id IN (SELECT unnest($runs{n}::VARCHAR[]))'
            params[f"runs{n}"] = list(run_ids)
            if counter:
                where += f" AND counter = $counter{n}"
                params[f"counter{n}"] = counter
            # LIMIT 1: each scan stops at the first non-NULL value instead of counting them all.
            items.append(f"(SELECT count(*) FROM (SELECT 1 FROM {name} WHERE {where} LIMIT 1)) > 0")
        row = self._con.execute(f"SELECT {', '.join(items)}", params).fetchall()[0]
        self._seen.update(zip(todo, row, strict=True))
