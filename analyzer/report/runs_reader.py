"""The series of many run pages read at once: each chart's query runs once for every run (a LATERAL join
over the run ids) instead of once per page, and its rows are split per run.

A page's series queries are a few ms each however small the run, and each one filters tables that hold
every run: per page, a job of N ranks would pay N times for each of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import duckdb
import polars as pl

from analyzer.rule_engine.views import create_views

_RUN = re.compile(r"\$run\b")


class RunsReader:
    """A connection (everything else is passed through to it) whose page series of the runs ``runs`` are
    read for all of them on the first page that asks; the helper views are made once, here."""

    def __init__(self, con: duckdb.DuckDBPyConnection, runs: Iterable[str]) -> None:
        self.con, self.runs = con, list(dict.fromkeys(runs))
        self._known = frozenset(self.runs)
        self._read: dict[tuple, tuple[pl.DataFrame, dict[str, pl.DataFrame]]] = {}
        create_views(con)

    def __getattr__(self, name: str):
        return getattr(self.con, name)

    def holds(self, run_id: str) -> bool:
        return run_id in self._known

    def series(self, sql: str, params: dict, order: str) -> pl.DataFrame:
        """The rows of ``sql`` (a query of one run, ``$run``) for ``params['run']``, read with every run's
        in one query the first time; ``order``: the query's ORDER BY in its output columns."""
        run = params["run"]
        others = {k: v for k, v in params.items() if k != "run"}
        key = (sql, order, repr(sorted(others.items())))
        if key not in self._read:
            self._read[key] = self._read_all(sql, others, order)
        empty, parts = self._read[key]
        return parts.get(run, empty)

    def _read_all(self, sql: str, others: dict, order: str) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
        inner = _RUN.sub("__runs.run_id", sql)
        ordered = f"__runs.run_id, {order}" if order else "__runs.run_id"
        query = (
            "SELECT __runs.run_id AS __run, __q.* FROM (SELECT unnest($__runs::VARCHAR[]) AS run_id) __runs, "
            f"LATERAL ({inner}) __q ORDER BY {ordered}"
        )
        rows = self.con.sql(query, params={**others, "__runs": self.runs}).pl()
        parts = rows.partition_by("__run", as_dict=True, include_key=False, maintain_order=True)
        return rows.drop("__run").clear(), {key[0]: part for key, part in parts.items()}

    def done(self, run_id: str) -> None:
        """Forget the run's series (its page is written)."""
        for _, parts in self._read.values():
            parts.pop(run_id, None)
