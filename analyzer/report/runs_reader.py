"""The series of many run pages read at once: each chart's query runs once for every run (a LATERAL join
over the run ids) instead of once per page, and its rows are split per run.

A page's series queries are a few ms each however small the run, and each one filters tables that hold
every run: per page, a job of N ranks would pay N times for each of them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import polars as pl

from analyzer.errors import TriageError

if TYPE_CHECKING:  # DuckDB is the main process's: a report worker answers its pages from ReadSeries alone
    import duckdb

_RUN = re.compile(r"\$run\b")
# A page query's filter on its run, `<alias.>run_id = $run`.
_RUN_FILTER = re.compile(r"(\b[\w.]*run_id) = \$run\b")
# A query's last ORDER BY, after which nothing is nested (a window's or a subquery's is inside parentheses).
_LAST_ORDER = re.compile(r"\s+ORDER BY [^()]*$")
_LIMITED = re.compile(r"\b(LIMIT|OFFSET)\b")
# That filter with the chunk's runs beside it (chunk_sql).
_IN_CHUNK = r"\1 = $run AND \1 BETWEEN $__first AND $__last AND \1 IN (SELECT unnest($__runs::VARCHAR[]))"
# A query's rows for some runs: (no rows, the runs' rows one run after another, per run the first of its rows
# there and their count; a run without rows has none). A page's rows are a slice of them, and the rows of a
# task's pages go to its worker as one frame per query (each frame pickled has a fixed cost of its own).
Rows = tuple[pl.DataFrame, pl.DataFrame, dict[str, tuple[int, int]]]
# What makes a query's rows for a chunk of runs without it: (the connection, the runs) -> their Rows, or None to
# leave them to the query.
Compute = Callable[["duckdb.DuckDBPyConnection", list[str]], "Rows | None"]
# Runs read per query: enough to pay a query's fixed cost once for many pages, few enough that the rows held
# at once (and DuckDB's memory for them) stay small however many ranks a job has.
CHUNK = 512


class RunsReader:
    """A connection (everything else is passed through to it) whose page series of the runs ``runs`` are
    read for ``chunk`` runs at once on the first page of them that asks; the helper views are made once, here.
    Pages are expected in the order of ``runs`` (any order is right, that one holds the fewest rows)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, runs: Iterable[str], chunk: int | None = None) -> None:
        from analyzer.report.empty_sources import EmptySources
        from analyzer.rule_engine.views import create_views

        self.con, self.runs = con, list(dict.fromkeys(runs))
        chunk = chunk or CHUNK
        self._chunk = {run: i // chunk for i, run in enumerate(self.runs)}
        self._members = [self.runs[i : i + chunk] for i in range(0, len(self.runs), chunk)]
        self._left = [set(members) for members in self._members]
        self._read: dict[tuple, Rows] = {}
        # per query: its rows (none) when a chunk read none from tables that are all empty: so are every chunk's
        self._none: dict[tuple, pl.DataFrame] = {}
        self._sources = EmptySources(con)
        create_views(con)

    def __getattr__(self, name: str):
        return getattr(self.con, name)

    def holds(self, run_id: str) -> bool:
        return run_id in self._chunk

    def chunk_of(self, run_id: str) -> int | None:
        """The number of the chunk of runs read with ``run_id``; None for a run it does not hold."""
        return self._chunk.get(run_id)

    def series(
        self, sql: str, params: dict, order: str, compute: Compute | None = None, rows_from: tuple[str, ...] = ()
    ) -> pl.DataFrame:
        """The rows of ``sql`` (a query of one run, ``$run``) for ``params['run']``, read with every run's
        in one query the first time; ``order``: the query's ORDER BY in its output columns. ``compute``, when
        given, makes the same rows for a chunk of runs (the connection, the runs) instead of the query, or
        returns None to leave them to it. ``rows_from``: tables the query has no row without."""
        run = params["run"]
        others = {k: v for k, v in params.items() if k != "run"}
        chunk = self._chunk[run]
        key = (chunk, *_key(sql, params, order))
        if key not in self._read:
            made = compute(self.con, self._members[chunk]) if compute is not None else None
            self._read[key] = made if made is not None else self._query(sql, others, order, key, rows_from)
        return _run_rows(self._read[key], run)

    def taken(self, runs: list[str]) -> dict[tuple, Rows]:
        """The series read so far for ``runs`` (each of one chunk), for a ReadSeries to answer their pages."""
        chunks = {self._chunk[run] for run in runs}
        return {key[1:]: _runs_rows(read, runs) for key, read in self._read.items() if key[0] in chunks}

    def _query(self, sql: str, others: dict, order: str, read_key: tuple, rows_from: tuple[str, ...]) -> Rows:
        """The query's rows for the chunk's runs (``read_key``: the chunk, then the query's key); none, read over
        no run (for their columns), when one of the tables it has no row without (``rows_from``) is empty; not
        run again once a chunk read none when its tables are all empty."""
        chunk, key = read_key[0], read_key[1:]
        if key not in self._none and any(self._sources.table_empty(t) for t in rows_from):
            self._none[key] = self._read_all(sql, others, order, [])[0]  # no run: only its columns are made
        if key in self._none:
            return self._none[key], self._none[key], {}
        empty, rows, spans = self._read_all(sql, others, order, self._members[chunk])
        if not spans and (any(self._sources.table_empty(t) for t in rows_from) or self._sources.all_empty(sql)):
            self._none[key] = empty
        return empty, rows, spans

    def _read_all(self, sql: str, others: dict, order: str, runs: list[str]) -> Rows:
        inner = chunk_sql(sql)
        ordered = f"__runs.run_id, {order}" if order else "__runs.run_id"
        query = (
            "SELECT __runs.run_id AS __run, __q.* FROM (SELECT unnest($__runs::VARCHAR[]) AS run_id) __runs, "
            f"LATERAL ({inner}) __q ORDER BY {ordered}"
        )
        chunk = {"__runs": runs, "__first": min(runs, default=None), "__last": max(runs, default=None)}
        return rows_by_run(self.con.sql(query, params={**others, **chunk}).pl())

    def done(self, run_id: str) -> None:
        """The run's page is written: its chunk's series are forgotten once every page of the chunk is; nothing
        for a run it does not hold."""
        chunk = self._chunk.get(run_id)
        if chunk is None:
            return
        self._left[chunk].discard(run_id)
        if not self._left[chunk]:
            for key in [k for k in self._read if k[0] == chunk]:
                del self._read[key]


def chunk_sql(sql: str) -> str:
    """A query of one run (``$run``) as the LATERAL side of a chunk's query (its run: ``__runs.run_id``).

    Each filter on the run also keeps only the chunk's runs (``$__runs``). The filter on the correlated run
    alone is applied by DuckDB after the query's CTEs are built, so each chunk would build them over every
    run the connection holds: a job of N ranks in N / CHUNK chunks would cost N squared. The added
    conditions are uncorrelated, so they filter the scans and the rows are the same. The range of the chunk's
    run ids (``$__first``, ``$__last``) is a constant DuckDB compares with each row group's run ids, so it
    skips the row groups of other runs unread; the list alone is looked up row by row.

    The query's own last ORDER BY (without LIMIT) is left out: the chunk's query orders every row by the
    query's ORDER BY in its output columns, and a sort of each run's rows before that one is wasted.

    >>> print(chunk_sql("SELECT x FROM t WHERE t.run_id = $run AND y = $y ORDER BY x").replace(" AND t.", "\\n AND t."))
    SELECT x FROM t WHERE t.run_id = __runs.run_id
     AND t.run_id BETWEEN $__first AND $__last
     AND t.run_id IN (SELECT unnest($__runs::VARCHAR[])) AND y = $y
    """
    last = _LAST_ORDER.search(sql)
    unordered = sql if last is None or _LIMITED.search(last.group(0)) else sql[: last.start()]
    return _RUN.sub("__runs.run_id", _RUN_FILTER.sub(_IN_CHUNK, unordered))


class NeedsDatabase(TriageError):
    """A page asked a ReadSeries for rows it was not given: the page is to be written where the database is
    (the report pool catches it; under the one error base all the same, so that a slip says what it is)."""


class ReadSeries:
    """The series a RunsReader read for some runs (``RunsReader.taken``), answering their pages' queries
    without a connection: a page written in another process, which has none, raises NeedsDatabase for any
    other query (a step's zoom, a query of its own)."""

    def __init__(self, read: dict[tuple, Rows], runs: Iterable[str]) -> None:
        self._read, self._runs = read, frozenset(runs)

    def __getattr__(self, name: str):
        raise NeedsDatabase(f"the page asked the database for {name!r}")

    def holds(self, run_id: str) -> bool:
        return run_id in self._runs

    def series(
        self, sql: str, params: dict, order: str, compute: Compute | None = None, rows_from: tuple[str, ...] = ()
    ) -> pl.DataFrame:
        """The rows read for ``params['run']`` by the RunsReader's same query (or made by its ``compute``)."""
        key = _key(sql, params, order)
        if key not in self._read:
            raise NeedsDatabase("the page asked a query that was not read for it")
        return _run_rows(self._read[key], params["run"])


def rows_by_run(rows: pl.DataFrame) -> Rows:
    """The Rows of a chunk's query whose rows are ordered by their run (column ``__run``) first: each run's rows
    are one stretch, told by the lengths of the run column's runs."""
    stretches = rows.get_column("__run").rle().struct.unnest()
    runs, lengths = stretches.get_column("value").to_list(), stretches.get_column("len").to_list()
    rows = rows.drop("__run")
    return rows.clear(), rows, spans_of(runs, lengths)


def spans_of(runs: list[str], lengths: Iterable[int]) -> dict[str, tuple[int, int]]:
    """Rows' spans (first row, count) per run, of rows holding ``lengths`` rows of each of ``runs`` in turn."""
    lengths = list(lengths)  # read twice
    starts = itertools.accumulate(lengths, initial=0)  # and the end of the last, which zip leaves
    return {run: (start, n) for run, start, n in zip(runs, starts, lengths, strict=False)}


def _run_rows(read: Rows, run: str) -> pl.DataFrame:
    """The rows of ``run`` among ``read`` (a slice of its frame), its no rows when it has none."""
    empty, rows, spans = read
    span = spans.get(run)
    return empty if span is None else rows.slice(*span)


def _runs_rows(read: Rows, runs: list[str]) -> Rows:
    """The rows of ``runs`` among ``read``: one slice when their rows are one stretch (the runs of a task are
    consecutive runs of its chunk), else the slices put together."""
    empty, rows, spans = read
    held = [run for run in runs if run in spans]
    if not held:
        return empty, empty, {}
    stretches: list[list[int]] = []  # [first row, count] of each stretch of the held runs' rows
    for run in held:
        start, length = spans[run]
        if stretches and sum(stretches[-1]) == start:
            stretches[-1][1] += length
        else:
            stretches.append([start, length])
    parts = [rows.slice(start, length) for start, length in stretches]
    at = spans_of(held, (spans[run][1] for run in held))
    return empty, parts[0] if len(parts) == 1 else pl.concat(parts, rechunk=True), at


def _key(sql: str, params: dict, order: str) -> tuple:
    """A query of any run: its text, order and parameters other than the run."""
    return sql, order, repr(sorted((k, v) for k, v in params.items() if k != "run"))


# What a page's series may be read from instead of a connection.
READERS = (RunsReader, ReadSeries)
