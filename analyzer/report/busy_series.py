"""The compute-busy series of many run pages at once, their bucket sums made with numpy from the rules' busy
intervals: the rows ``series.busy_over_time`` reads for one run, to the last bit, without a query that joins,
sorts and groups a thousand buckets per run for every run of a chunk; and the idle stretches between those
intervals (``series.idle_stretches``' rows), without a window over every interval of the chunk.

Each number is made as DuckDB makes it: integer bucket sums, doubles divided as DuckDB divides them, and
rounded by DuckDB itself (its ``round`` is the exact value's, half away from zero), in one projection of the
chunk's rows. A chunk whose busy sums could leave the range where that holds exactly is read by the query
instead (``None``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from analyzer.ingest.sql_values import IN_RUNS
from analyzer.report.runs_reader import Rows, spans_of

# DuckDB turns 100.0 * busy_ns into a decimal of one digit (1000 * busy_ns as an integer) and that into a double:
# the same double as 100 * busy_ns while 1000 * busy_ns is below 2 ** 53.
_EXACT_BUSY_NS = 2**53 // 1000
SCHEMA = {"bucket": pl.Int64, "offset_ms": pl.Float64, "width_ms": pl.Float64, "busy_pct": pl.Float64}

# Each interval's run by its place in the list of runs (from 1), not its name: numpy makes no string per interval.
_PIECES = """SELECT r.run_no, p.start_ns, p.end_ns FROM _busy_intervals AS p
INNER JOIN (SELECT unnest($runs::VARCHAR []) AS run_id, generate_subscripts($runs::VARCHAR [], 1) AS run_no) AS r
    ON p.run_id = r.run_id
WHERE p.end_ns > p.start_ns ORDER BY r.run_no, p.start_ns, p.end_ns"""
_WINDOWS = f"""SELECT run_id, min(start_ns) AS t0, max(end_ns) AS t1 FROM ops
WHERE {IN_RUNS} AND start_ns IS NOT NULL AND end_ns IS NOT NULL GROUP BY run_id"""
# busy_over_time's rounding, by DuckDB, of the unrounded numbers (a projection keeps its rows' order).
_ROUNDED = "bucket, round(offset_ms, 6) AS offset_ms, round(width_ms, 6) AS width_ms, round(busy_pct, 3) AS busy_pct"
IDLE_SCHEMA = {"start_ms": pl.Float64, "end_ms": pl.Float64, "idle_us": pl.Float64}
_IDLE_ROUNDED = "round(start_ms, 6) AS start_ms, round(end_ms, 6) AS end_ms, round(idle_us, 3) AS idle_us"


def busy_parts(con: duckdb.DuckDBPyConnection, runs: list[str], bucket_count: int) -> Rows | None:
    """The ``busy_over_time`` rows of ``runs`` (those with busy intervals and a task window: runs_reader.Rows),
    with ``bucket_count`` buckets over the whole run; None when a chunk's numbers could differ from DuckDB's
    (then they are read by the query)."""
    made = _buckets(*_intervals(con, runs), bucket_count)
    return None if made is None else _rows(con, SCHEMA, _ROUNDED, *made)


def idle_parts(con: duckdb.DuckDBPyConnection, runs: list[str], min_share: float, limit: int) -> Rows | None:
    """The ``idle_stretches`` rows of ``runs`` (those with busy intervals: runs_reader.Rows); None when a run's
    stretches are not surely the query's (then they are read by it)."""
    return _per_run(con, runs, IDLE_SCHEMA, _IDLE_ROUNDED, lambda s, e, w: _idle(s, e, w, min_share, limit))


# A chunk's busy intervals: per run with intervals (in the order of the list of runs), its name, where its
# intervals start and end among the chunk's (in time order), and its task window; the intervals' starts and ends.
Intervals = tuple[list[tuple[str, int, int, tuple | None]], np.ndarray, np.ndarray]


def _intervals(con: duckdb.DuckDBPyConnection, runs: list[str]) -> Intervals:
    """The busy intervals and task windows of the runs of ``runs`` that have intervals (``Intervals``)."""
    pieces = con.sql(_PIECES, params={"runs": runs}).fetchnumpy()
    windows = con.sql(_WINDOWS, params={"runs": runs}).fetchnumpy()
    window = dict(zip(windows["run_id"].tolist(), zip(windows["t0"].tolist(), windows["t1"].tolist())))  # noqa: B905
    numbers = pieces["run_no"]
    starts, ends = np.asarray(pieces["start_ns"], dtype=np.int64), np.asarray(pieces["end_ns"], dtype=np.int64)
    edges = [0, *(np.flatnonzero(numbers[1:] != numbers[:-1]) + 1).tolist(), len(numbers)] if len(numbers) else [0]
    held = []
    for lo_i, hi_i in zip(edges[:-1], edges[1:], strict=True):
        run = runs[int(numbers[lo_i]) - 1]
        held.append((run, lo_i, hi_i, window.get(run)))
    return held, starts, ends


def _per_run(
    con: duckdb.DuckDBPyConnection, runs: list[str], schema: dict, rounded: str, made_of: Callable
) -> Rows | None:
    """Each run's unrounded columns ``made_of(starts, ends, window)`` (its busy intervals in time order, its
    task window), or None for the chunk when one run's are None; rounded by DuckDB (``rounded``) in one
    projection of the chunk's rows."""
    held, starts, ends = _intervals(con, runs)
    made: list[tuple[str, list[np.ndarray]]] = []
    for run, lo_i, hi_i, window in held:
        columns = made_of(starts[lo_i:hi_i], ends[lo_i:hi_i], window)
        if columns is None:
            return None
        if len(columns[0]):
            made.append((run, columns))
    stacked = [np.concatenate([c[k] for _, c in made]) for k in range(len(schema))] if made else []
    return _rows(con, schema, rounded, [run for run, _ in made], [len(c[0]) for _, c in made], stacked)


def _rows(
    con: duckdb.DuckDBPyConnection, schema: dict, rounded: str, runs: list[str], lengths: list, stacked: list
) -> Rows:
    """The Rows of ``runs``, each ``lengths`` rows of the ``stacked`` unrounded columns, rounded by DuckDB
    (``rounded``) in one projection of the chunk's rows."""
    empty = pl.DataFrame(schema=schema)
    if not runs:
        return empty, empty, {}
    rows = con.from_arrow(pa.table(dict(zip(schema, stacked, strict=True)))).project(rounded).pl()
    return empty, rows, spans_of(runs, lengths)


def _buckets(
    held: list[tuple[str, int, int, tuple | None]], s: np.ndarray, e: np.ndarray, n: int
) -> tuple[list[str], list[int], list[np.ndarray]] | None:
    """The buckets of every run of ``held`` (busy_over_time's grid, clipping and sums, per run) with their
    unrounded offset, width and busy share, the runs' all at once: (the runs with buckets, their counts of
    buckets, the stacked columns); no bucket for a run without a task window; None when a run's numbers could
    leave the range where they are DuckDB's."""
    runs: list[str] = []
    counts, los, his, widths = [], [], [], []
    piece_run = np.full(len(s), -1, dtype=np.int64)  # per interval: its run's place in ``runs`` (-1: none)
    for run, lo_i, hi_i, window in held:
        if window is None or window[0] is None or window[1] is None or not window[1] > window[0]:
            continue
        lo, hi = int(window[0]), int(window[1])
        width = int(max(1.0, math.ceil(float(hi - lo) / n)))
        if width >= _EXACT_BUSY_NS:
            return None
        piece_run[lo_i:hi_i] = len(runs)
        runs.append(run)
        counts.append((hi - lo + width - 1) // width)
        los.append(lo)
        his.append(hi)
        widths.append(width)
    if not runs:
        return [], [], []
    # each run's buckets, then one slot where its running sum of whole buckets ends, in one array
    base = np.asarray([0, *itertools.accumulate(c + 1 for c in counts)], dtype=np.int64)
    lo_of, hi_of, width_of = (np.asarray(v, dtype=np.int64) for v in (los, his, widths))
    k = piece_run[piece_run >= 0]
    s, e = s[piece_run >= 0], e[piece_run >= 0]
    keep = (e > lo_of[k]) & (s < hi_of[k])
    k = k[keep]
    start, step = lo_of[k], width_of[k]  # each interval's run's window start and bucket width
    s, e = np.maximum(s[keep], start), np.minimum(e[keep], hi_of[k])
    first, last = (s - start) // step, (e - 1 - start) // step
    busy = np.zeros(int(base[-1]), dtype=np.int64)
    inside = first == last
    np.add.at(busy, base[k[inside]] + first[inside], (e - s)[inside])
    out = ~inside
    f, la, ps, pe, start, step, at = first[out], last[out], s[out], e[out], start[out], step[out], base[k[out]]
    np.add.at(busy, at + f, start + (f + 1) * step - ps)  # a piece over several buckets: its part of the first,
    np.add.at(busy, at + la, pe - (start + la * step))  # its part of the last,
    full = np.zeros(int(base[-1]), dtype=np.int64)  # and the whole buckets between, as a running sum
    np.add.at(full, at + f + 1, step)
    np.add.at(full, at + la, -step)
    busy = busy + np.cumsum(full)  # each run's whole buckets add up to none by its end
    return runs, counts, _columns(busy, base, counts, width_of)


def _columns(busy: np.ndarray, base: np.ndarray, counts: list[int], width_of: np.ndarray) -> list[np.ndarray]:
    """busy_over_time's unrounded columns of the runs' buckets: ``busy`` holds each run's sums from its ``base``
    on, ``counts`` buckets of ``width_of`` ns."""
    row_run = np.repeat(np.arange(len(counts)), counts)
    bucket = np.arange(len(row_run), dtype=np.int64) - np.repeat(base[:-1] - np.arange(len(counts)), counts)
    row_width = width_of[row_run]
    offset = (bucket * row_width).astype(np.float64) / 1e6
    busy_pct = (100 * busy[base[row_run] + bucket]).astype(np.float64) / row_width.astype(np.float64)
    return [bucket, offset, row_width.astype(np.float64) / 1e6, busy_pct]


def _idle(s: np.ndarray, e: np.ndarray, window: tuple | None, min_share: float, limit: int) -> list[np.ndarray] | None:
    """One run's idle stretches as idle_stretches finds them, unrounded: between its intervals (in time order),
    where none that began before has ended (the running end of the earlier ones), and from the window's start to
    the first and from the last end to the window's end; those longer than ``min_share`` of the window (and
    than 1 ns), the ``limit`` longest (the earlier first among equals), in time order. None when the run has no
    task window, or when two stretches start together (the query's order would then be its own)."""
    if window is None or window[0] is None or window[1] is None:
        return None
    t0, t1 = int(window[0]), int(window[1])
    reach = np.maximum.accumulate(e)  # the latest end of the intervals up to each one
    between = np.flatnonzero(s[1:] > reach[:-1]) + 1
    starts = np.concatenate([reach[between - 1], [t0, reach[-1]]])
    ends = np.concatenate([s[between], [s[0], t1]])
    length = ends - starts
    keep = np.flatnonzero(length > max(1.0, min_share * float(t1 - t0)))
    chosen = keep[np.lexsort((starts[keep], -length[keep]))][:limit]
    chosen = chosen[np.argsort(starts[chosen], kind="stable")]
    begin, end = starts[chosen], ends[chosen]
    if len(np.unique(begin)) < len(begin):
        return None
    return [(begin - t0).astype(np.float64) / 1e6, (end - t0).astype(np.float64) / 1e6, (end - begin) / 1e3]
