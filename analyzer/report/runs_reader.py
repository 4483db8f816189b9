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
# Runs read per query: enough to pay a query's fixed cost once for many pages, few enough that the rows held
# at once (and DuckDB's memory for them) stay small however many ranks a job has.
CHUNK = 256


class RunsReader:
    """A connection (everything else is passed through to it) whose page series of the runs ``runs`` are
    read for ``chunk`` runs at once on the first page of them that asks; the helper views are made once, here.
    Pages are expected in the order of ``runs`` (any order is right, that one holds the fewest rows)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, runs: Iterable[str], chunk: int | None = None) -> None:
        self.con, self.runs = con, list(dict.fromkeys(runs))
        chunk = chunk or CHUNK
        self._chunk = {run: i // chunk for i, run in enumerate(self.runs)}
        self._members = [self.runs[i : i + chunk] for i in range(0, len(self.runs), chunk)]
        self._left = [set(members) for members in self._members]
        self._read: dict[tuple, tuple[pl.DataFrame, dict[str, pl.DataFrame]]] = {}
        create_views(con)

    def __getattr__(self, name: str):
        return getattr(self.con, name)

    def holds(self, run_id: str) -> bool:
        return run_id in self._chunk

    def series(self, sql: str, params: dict, order: str) -> pl.DataFrame:
        """The rows of ``sql`` (a query of one run, ``$run``) for ``params['run']``, read with every run's
        in one query the first time; ``order``: the query's ORDER BY in its output columns."""
        run = params["run"]
        others = {k: v for k, v in params.items() if k != "run"}
        chunk = self._chunk[run]
        key = (chunk, sql, order, repr(sorted(others.items())))
        if key not in self._read:
            self._read[key] = self._read_all(sql, others, order, self._members[chunk])
        empty, parts = self._read[key]
        return parts.get(run, empty)

    def _read_all(
        self, sql: str, others: dict, order: str, runs: list[str]
    ) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
        inner = _RUN.sub("__runs.run_id", sql)
        ordered = f"__runs.run_id, {order}" if order else "__runs.run_id"
        query = (
            "SELECT __runs.run_id AS __run, __q.* FROM (SELECT unnest($__runs::VARCHAR[]) AS run_id) __runs, "
            f"LATERAL ({inner}) __q ORDER BY {ordered}"
        )
        rows = self.con.sql(query, params={**others, "__runs": runs}).pl()
        parts = rows.partition_by("__run", as_dict=True, include_key=False, maintain_order=True)
        return rows.drop("__run").clear(), {key[0]: part for key, part in parts.items()}

    def done(self, run_id: str) -> None:
        """Forget the run's series (its page is written), and its chunk's once every page of it is written."""
        chunk = self._chunk[run_id]
        self._left[chunk].discard(run_id)
        for key in [k for k in self._read if k[0] == chunk]:
            if self._left[chunk]:
                self._read[key][1].pop(run_id, None)
            else:
                del self._read[key]
