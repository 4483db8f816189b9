"""Small chart-ready tables per run, from the normalized tables and the rules' helper relations.

Every function takes ``(con, run_id)`` and returns a polars DataFrame of at most a few
thousand rows, however many tasks the run holds; it is empty when the data was not collected.
Times on the x axis are milliseconds from the run's first device task (``offset_ms``).

Busy time and gaps are read from the helper relations the rules judge (``_busy_intervals`` over
``_compute_tasks``, ``_device_gaps``: analyzer/rule_engine/views/*.sql), never recomputed here, so a
chart and a finding count the same compute tasks and the same gaps. The operator-type charts
count the rules' compute tasks (``_compute_tasks``: communication tasks left out), and the calls
chart marks as hotspots the subjects the rule charting it reported, never a test of its own.
Those relations must exist: call ``create_views(con)`` first (``html.build_figures`` does; it is
cached while the tables are unchanged).
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from typing import TYPE_CHECKING

import polars as pl

from analyzer.report.runs_reader import READERS, Compute, Rows, RunsReader, rows_by_run

if TYPE_CHECKING:  # DuckDB is the main process's: a report worker draws pages from the series read for it
    import duckdb

# The rules' compute-busy intervals of the run (disjoint pieces) and its first-to-last task window.
_PIECES = """
pieces AS (
    SELECT start_ns AS s, end_ns AS e FROM _busy_intervals WHERE run_id = $run AND end_ns > start_ns
),
win AS (
    SELECT min(start_ns) AS t0, max(end_ns) AS t1 FROM ops
    WHERE run_id = $run AND start_ns IS NOT NULL AND end_ns IS NOT NULL
)
"""


def _query(
    con: duckdb.DuckDBPyConnection | RunsReader,
    sql: str,
    params: dict,
    order: str,
    batched: bool = True,
    compute: Compute | None = None,
    rows_from: tuple[str, ...] = (),
) -> pl.DataFrame:
    """The query's rows (a few thousand at most) as a DataFrame. From a RunsReader (the pages of many
    runs), read for all its runs at once unless not ``batched`` (parameters of this page only), ``order``
    being the query's ORDER BY in its output columns, or made by ``compute`` (RunsReader.series); else read
    as Python rows, a few per chart. ``rows_from``: tables (or views) the query has no row without."""
    if batched and isinstance(con, READERS) and con.holds(params["run"]):
        return con.series(sql, params, order, compute, rows_from)
    rel = con.sql(sql, params=params)
    return pl.DataFrame(rel.fetchall(), schema=rel.columns, orient="row", infer_schema_length=None)


def busy_over_time(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    bucket_count: int = 1000,
    window_ns: tuple[int, int] | None = None,
) -> pl.DataFrame:
    """Compute busy percentage per time bucket: the rules' _busy_intervals inside each bucket.

    ``window_ns`` (start, end) limits the buckets to that stretch (a step), offsets still counted
    from the run's first task. Columns: bucket, offset_ms (bucket start), width_ms, busy_pct (0-100).
    Empty without compute tasks.
    """
    lo, hi = window_ns if window_ns else (None, None)
    sql = f"""WITH {_PIECES},
    bounds AS (SELECT t0, coalesce($lo, t0) AS lo, coalesce($hi, t1) AS hi FROM win),
    grid AS (SELECT t0, lo, hi, greatest(1, ceil((hi - lo) / $n))::BIGINT AS width FROM bounds WHERE hi > lo),
    clipped AS (SELECT greatest(s, lo) AS s, least(e, hi) AS e, lo, width FROM pieces, grid WHERE e > lo AND s < hi),
    located AS (SELECT s, e, (s - lo) // width AS b0, (e - 1 - lo) // width AS b1 FROM clipped),
    split AS (  -- most pieces lie inside one bucket; only the others are cut per bucket
        SELECT s, e, b0 AS bucket FROM located WHERE b0 = b1
        UNION ALL SELECT s, e, unnest(range(b0, b1 + 1)) FROM located WHERE b1 > b0
    ),
    busy AS (
        SELECT bucket, sum(least(e, lo + (bucket + 1) * width) - greatest(s, lo + bucket * width)) AS busy_ns
        FROM split, grid GROUP BY bucket
    ),
    buckets AS (SELECT unnest(range(0, ((hi - lo + width - 1) // width))) AS bucket FROM grid)
    SELECT b.bucket, round((g.lo - g.t0 + b.bucket * g.width) / 1e6, 6) AS offset_ms,
           round(g.width / 1e6, 6) AS width_ms, round(100.0 * coalesce(busy.busy_ns, 0) / g.width, 3) AS busy_pct
    FROM buckets b CROSS JOIN grid g LEFT JOIN busy USING (bucket)
    WHERE EXISTS (SELECT 1 FROM pieces)
    ORDER BY b.bucket"""
    params = {"run": run_id, "n": bucket_count, "lo": lo, "hi": hi}
    compute = None
    if isinstance(con, RunsReader):  # the pages of many runs: numpy's rows (pyarrow: not in a page's worker)
        from analyzer.report.busy_series import busy_parts

        compute = functools.partial(busy_parts, bucket_count=bucket_count)
    return _query(con, sql, params, "bucket", batched=window_ns is None, compute=compute)


def step_window(con: duckdb.DuckDBPyConnection, run_id: str, step_id: int) -> tuple[int, int, float, float] | None:
    """A step's window over every device: (start_ns, end_ns, start_ms, end_ms), the ms counted from
    the run's first device task as on the time charts; None when the step has no window."""
    rows = con.execute(
        """SELECT min(s.start_ns), max(s.end_ns),
                  round((min(s.start_ns) - o.t0) / 1e6, 6), round((max(s.end_ns) - o.t0) / 1e6, 6)
        FROM steps s, (SELECT min(start_ns) AS t0 FROM ops WHERE run_id = $run) o
        WHERE s.run_id = $run AND s.step_id = $step AND s.start_ns IS NOT NULL AND s.end_ns > s.start_ns
        GROUP BY o.t0""",
        {"run": run_id, "step": step_id},
    ).fetchall()
    row = rows[0] if rows else None
    return None if row is None or row[0] is None else (int(row[0]), int(row[1]), float(row[2]), float(row[3]))


def idle_stretches(
    con: duckdb.DuckDBPyConnection, run_id: str, min_share: float = 0.01, limit: int = 200
) -> pl.DataFrame:
    """Stretches with no compute task running (outside the rules' busy intervals), longer than
    ``min_share`` of the run's span.

    Columns: start_ms, end_ms, idle_us; the ``limit`` longest, in time order.
    """
    sql = f"""WITH {_PIECES},
    ordered AS (
        SELECT s, max(e) OVER (ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
               AS prev_end
        FROM pieces
    ),
    gaps AS (
        SELECT prev_end AS gap_start, s AS gap_end FROM ordered WHERE s > prev_end
        UNION ALL SELECT t0, (SELECT min(s) FROM pieces) FROM win
        UNION ALL SELECT (SELECT max(e) FROM pieces), t1 FROM win
    ),
    long_gaps AS (
        SELECT gap_start, gap_end FROM gaps, win
        WHERE gap_end - gap_start > greatest(1, $share * (t1 - t0))
        ORDER BY gap_end - gap_start DESC, gap_start LIMIT $limit
    )
    SELECT round((gap_start - t0) / 1e6, 6) AS start_ms, round((gap_end - t0) / 1e6, 6) AS end_ms,
           round((gap_end - gap_start) / 1e3, 3) AS idle_us
    FROM long_gaps, win WHERE EXISTS (SELECT 1 FROM pieces) ORDER BY gap_start"""
    compute = None
    if isinstance(con, RunsReader):  # the pages of many runs: numpy's rows (pyarrow: not in a page's worker)
        from analyzer.report.busy_series import idle_parts

        compute = functools.partial(idle_parts, min_share=min_share, limit=limit)
    return _query(con, sql, {"run": run_id, "share": min_share, "limit": limit}, "start_ms, end_ms", compute=compute)


_OP_TYPES = """
per_type AS (
    SELECT coalesce(op_type, op_name, '(unnamed)') AS op_type, count(*) AS call_count,
           sum(dur_us) AS total_us, avg(dur_us) AS avg_us
    FROM _compute_tasks WHERE run_id = $run AND dur_us IS NOT NULL GROUP BY 1
),
ranked AS (
    SELECT *, row_number() OVER (ORDER BY total_us DESC, op_type) AS time_rank,
           total_us / sum(total_us) OVER () AS share,
           sum(total_us) OVER (ORDER BY total_us DESC, op_type ROWS UNBOUNDED PRECEDING)
               / sum(total_us) OVER () AS cumulative_share
    FROM per_type
)
"""


# Operator types read for both charts of them (the calls chart's default limit): one query serves both.
_OP_TYPE_ROWS = 2000


def _op_types(con: duckdb.DuckDBPyConnection, run_id: str, rows: int) -> pl.DataFrame:
    """The first ``rows`` operator types by summed compute-task time, with every column either chart draws."""
    sql = f"""WITH {_OP_TYPES}
    SELECT time_rank, op_type, call_count, round(total_us, 3) AS total_us, round(avg_us, 3) AS avg_us,
           round(share, 6) AS share, round(cumulative_share, 6) AS cumulative_share
    FROM ranked WHERE time_rank <= $limit ORDER BY time_rank"""
    # a reader reads the rows of both charts at once; a connection only the rows asked for
    limit = max(rows, _OP_TYPE_ROWS) if isinstance(con, READERS) else rows
    return _query(con, sql, {"run": run_id, "limit": limit}, "time_rank").head(rows)


def op_type_pareto(con: duckdb.DuckDBPyConnection, run_id: str, top_n: int = 20) -> pl.DataFrame:
    """The ``top_n`` operator types by summed compute-task time, with calls and cumulative share.

    Counts the rules' compute tasks (_compute_tasks); operators without a type are grouped by name.
    Columns: time_rank, op_type, call_count, total_us, avg_us, share (0-1 of all compute-task time),
    cumulative_share.
    """
    return _op_types(con, run_id, top_n)


def op_type_calls(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    hotspots: Collection[str] = (),
    limit: int = _OP_TYPE_ROWS,
) -> pl.DataFrame:
    """Call count against average time per operator type: compute tasks, the ``limit`` types with
    most time.

    ``hotspot`` marks the types named in ``hotspots``: the subjects of the run's findings charted
    here, so the chart shows what the rule (with its effective params) reported.
    Columns: op_type, call_count, avg_us, total_us, time_rank, hotspot.
    """
    # the hotspots are marked here, not in the query, so that one query serves every run's page
    calls = _op_types(con, run_id, limit)[["op_type", "call_count", "avg_us", "total_us", "time_rank"]]
    hot = frozenset(hotspots)
    return calls.hstack([pl.Series("hotspot", [t in hot for t in calls["op_type"].to_list()], dtype=pl.Boolean)])


def pipeline_breakdown(con: duckdb.DuckDBPyConnection, run_id: str, top_n: int = 15) -> pl.DataFrame:
    """Cube / vector / scalar / MTE time as shares of core time, for the top operator types by core time.

    Pipes run concurrently, so the four shares may sum past 1. Columns: op_type, core_time_us,
    cube_share, vector_share, scalar_share, mte_share. Empty without PMU data.
    """
    sql = """SELECT coalesce(op_type, op_name, '(unnamed)') AS op_type, round(sum(core_time_us), 3) AS core_time_us,
           round(coalesce(sum(cube_time_us), 0) / sum(core_time_us), 6) AS cube_share,
           round(coalesce(sum(vector_time_us), 0) / sum(core_time_us), 6) AS vector_share,
           round(coalesce(sum(scalar_time_us), 0) / sum(core_time_us), 6) AS scalar_share,
           round(coalesce(sum(mte_time_us), 0) / sum(core_time_us), 6) AS mte_share
    FROM ops WHERE run_id = $run AND core_time_us > 0
    GROUP BY 1 ORDER BY sum(core_time_us) DESC, op_type LIMIT $top"""
    return _query(con, sql, {"run": run_id, "top": top_n}, "core_time_us DESC, op_type")


def gap_histogram(con: duckdb.DuckDBPyConnection, run_id: str, bins_per_decade: int = 4) -> pl.DataFrame:
    """The rules' device gaps (_device_gaps: no task of the device running), in log-spaced bins.

    Columns: bin, low_us, high_us, gap_count, total_gap_us. Empty when the device never idles.
    """
    sql = """WITH binned AS (
        SELECT floor(log10(gap_us) * $k)::BIGINT AS bin, gap_us FROM _device_gaps
        WHERE run_id = $run AND gap_us > 0
    )
    SELECT bin, round(pow(10, bin / $k), 6) AS low_us, round(pow(10, (bin + 1) / $k), 6) AS high_us,
           count(*) AS gap_count, round(sum(gap_us), 3) AS total_gap_us
    FROM binned GROUP BY bin ORDER BY bin"""
    return _query(con, sql, {"run": run_id, "k": float(bins_per_decade)}, "bin")


def gap_positions(con: duckdb.DuckDBPyConnection, run_id: str, limit: int = 2000) -> pl.DataFrame:
    """The ``limit`` longest of the rules' device gaps (_device_gaps), where they are (a scatter).

    Columns: offset_ms (gap start), gap_us, before_op, after_op; in time order.
    """
    sql = """WITH longest AS (
        SELECT device_id, start_ns, end_ns, gap_us, op_before, op_after FROM _device_gaps
        WHERE run_id = $run ORDER BY gap_us DESC, start_ns, device_id NULLS FIRST LIMIT $limit
    ),
    origin AS (SELECT min(start_ns) AS t0 FROM ops WHERE run_id = $run)
    SELECT round((start_ns - t0) / 1e6, 6) AS offset_ms, round(gap_us, 3) AS gap_us,
           op_before AS before_op, op_after AS after_op
    FROM longest, origin ORDER BY start_ns, end_ns, device_id NULLS FIRST"""
    compute = functools.partial(_chunk_gap_positions, limit=limit) if isinstance(con, RunsReader) else None
    return _query(con, sql, {"run": run_id, "limit": limit}, "offset_ms, gap_us, before_op, after_op", compute=compute)


# gap_positions' rows of a chunk's runs, each run's longest gaps ranked by a window: a LATERAL join's LIMIT per run
# costs more, and so does a sort of all of a run's gaps by its ORDER BY. Only the gaps at least as long as the run's
# limit-th longest are ranked (max(gap_us, n) keeps n values per run as it reads): a run of 200,000 gaps would
# otherwise have them all sorted for the 2,000 it shows.
_CHUNK_GAPS = """WITH chunk AS (
    SELECT run_id, device_id, start_ns, end_ns, gap_us, op_before, op_after
    FROM _device_gaps WHERE run_id BETWEEN $first AND $last AND run_id IN (SELECT unnest($runs::VARCHAR []))
),

shortest_kept AS (SELECT run_id, list_min(max(gap_us, $limit)) AS gap_us FROM chunk GROUP BY run_id),

ranked AS (
    SELECT
        c.run_id, c.device_id, c.start_ns, c.end_ns, c.gap_us, c.op_before, c.op_after,
        row_number() OVER (PARTITION BY c.run_id ORDER BY c.gap_us DESC, c.start_ns, c.device_id NULLS FIRST) AS n
    FROM chunk AS c INNER JOIN shortest_kept AS k ON c.run_id = k.run_id AND c.gap_us >= k.gap_us
),

origin AS (
    SELECT run_id, min(start_ns) AS t0 FROM ops
    WHERE run_id BETWEEN $first AND $last AND run_id IN (SELECT unnest($runs::VARCHAR [])) GROUP BY run_id
)

SELECT
    r.run_id AS __run, round((r.start_ns - o.t0) / 1e6, 6) AS offset_ms, round(r.gap_us, 3) AS gap_us,
    r.op_before AS before_op, r.op_after AS after_op
FROM ranked AS r LEFT JOIN origin AS o ON r.run_id = o.run_id WHERE r.n <= $limit
ORDER BY __run, offset_ms, gap_us, before_op, after_op"""


def _chunk_gap_positions(con: duckdb.DuckDBPyConnection, runs: list[str], limit: int) -> Rows:
    """gap_positions' rows of ``runs`` (a chunk of a RunsReader), in the order the chunk's query gives them."""
    params = {"runs": runs, "first": min(runs), "last": max(runs), "limit": limit}
    return rows_by_run(con.sql(_CHUNK_GAPS, params=params).pl())


def log_marks(con: duckdb.DuckDBPyConnection, run_id: str, limit: int = 2000) -> pl.DataFrame:
    """The CANN log records `diagnose --logs` placed on the run's timeline (timeline rows of kind 'log').

    Columns: offset_ms (from the first task), activity (memory_alloc, compile, host_setup), name; in
    time order. Empty without --logs.
    """
    sql = """WITH origin AS (SELECT min(start_ns) AS t0 FROM ops WHERE run_id = $run)
    SELECT round((start_ns - t0) / 1e6, 6) AS offset_ms, category AS activity, name
    FROM timeline, origin WHERE run_id = $run AND kind = 'log'
    ORDER BY start_ns, end_ns, name LIMIT $limit"""
    return _query(con, sql, {"run": run_id, "limit": limit}, "offset_ms, name", rows_from=("timeline",))


def step_breakdown(con: duckdb.DuckDBPyConnection, run_id: str, limit: int = 5000) -> pl.DataFrame:
    """Per step (or the profiled span without steps): the parts of the time breakdown (_time_breakdown).

    Columns: step_id (NULL for the profiled span), label ('step N', 'whole run', ...), computing_us,
    comm_not_overlapped_us, other_tasks_us,
    gaps_us, launch_gaps_us, free_us (before the first and after the last task); they add up to
    the step's span.
    """
    sql = """SELECT step_id, subject AS label, computing_us, comm_not_overlapped_us, other_tasks_us, gaps_us,
           launch_gaps_us, free_before_us + free_after_us AS free_us
    FROM _time_breakdown WHERE run_id = $run AND window_no > 0 ORDER BY window_no LIMIT $limit"""
    return _query(con, sql, {"run": run_id, "limit": limit}, "step_id NULLS LAST, label")


def hbm_bandwidth(con: duckdb.DuckDBPyConnection, run_id: str, bucket_count: int = 1000) -> pl.DataFrame:
    """HBM read and write bandwidth over time, summed over HBM units, averaged into at most ``bucket_count`` buckets.

    Columns: counter ('hbm_read' / 'hbm_write'), offset_ms, mb_per_s. Empty when HBM was not collected.
    """
    sql = """WITH samples AS (
        SELECT counter, coalesce(instance, '') AS instance, ts_ns, value FROM counters
        WHERE run_id = $run AND counter IN ('hbm_read', 'hbm_write') AND ts_ns IS NOT NULL AND value IS NOT NULL
    ),
    origin AS (SELECT coalesce((SELECT min(start_ns) FROM ops WHERE run_id = $run), min(ts_ns)) AS t0,
                      min(ts_ns) AS c0, max(ts_ns) AS c1 FROM samples),
    grid AS (SELECT t0, c0, greatest(1, ceil((c1 - c0 + 1) / $n))::BIGINT AS width FROM origin),
    per_unit AS (
        SELECT counter, instance, (ts_ns - c0) // width AS bucket, avg(value) AS value
        FROM samples, grid GROUP BY ALL
    )
    SELECT counter, round((c0 + bucket * width - t0) / 1e6, 6) AS offset_ms, round(sum(value), 3) AS mb_per_s
    FROM per_unit, grid GROUP BY counter, bucket, c0, width, t0 ORDER BY counter, bucket"""
    return _query(con, sql, {"run": run_id, "n": bucket_count}, "counter, offset_ms", rows_from=("counters",))
