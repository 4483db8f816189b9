"""Chart-ready tables of memory, bandwidth and the cores' activity over time, on the run's shared time axis.

Every time is in milliseconds from the run's first device task (``offset_ms``), as on the compute busy
and HBM charts (series.py), so the report can draw them one above the other. The memory series and
its peak come from the rules' helper tables (``_memory_total``, ``_memory_peak``, ``_memory_at_peak``:
analyzer/rule_engine/views/memory.sql), never recomputed here. Call ``create_views(con)`` first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from analyzer.report.series import _query

if TYPE_CHECKING:  # DuckDB is the main process's: a report worker draws pages from the series read for it
    import duckdb

# The run's time origin: its first device task, else its first memory or counter sample.
_ORIGIN = """
origin AS (SELECT coalesce((SELECT min(start_ns) FROM ops WHERE run_id = $run),
                           (SELECT min(ts_ns) FROM memory_records WHERE run_id = $run),
                           (SELECT min(ts_ns) FROM counters WHERE run_id = $run)) AS t0)
"""


def time_range(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[float, float] | None:
    """(first, last) ms of everything the time charts draw: device tasks, memory, HBM, clock and
    utilisation samples; None when the run has none. Every time chart of the page uses this x range."""
    sql = f"""WITH {_ORIGIN},
    spans AS (
        SELECT start_ns AS a, end_ns AS b FROM ops WHERE run_id = $run AND start_ns IS NOT NULL AND end_ns IS NOT NULL
        UNION ALL SELECT ts_ns, ts_ns FROM memory_records WHERE run_id = $run AND source = 'memory_record'
        UNION ALL SELECT ts_ns, ts_ns FROM counters WHERE run_id = $run
            AND counter IN ('hbm_read', 'hbm_write', 'aicore_freq', 'aicore_utilization', 'aivector_utilization')
    )
    SELECT round((min(a) - t0) / 1e6, 6) AS first_ms, round((max(b) - t0) / 1e6, 6) AS last_ms
    FROM spans, origin GROUP BY t0"""
    rows = _query(con, sql, {"run": run_id}, "").rows()
    return (float(rows[0][0]), float(rows[0][1])) if rows and rows[0][0] is not None else None


def page_time_range(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[float, float] | None:
    """The x range every time chart of a page opens on: from 0 (the first device task) to the last thing drawn.
    Samples from before the first task (memory, HBM) are drawn left of 0, outside that first view: a
    double-click on a chart shows all of them."""
    whole = time_range(con, run_id)
    return None if whole is None else (0.0, whole[1]) if whole[1] > 0 else whole


def memory_over_time(con: duckdb.DuckDBPyConnection, run_id: str, bucket_count: int = 1500) -> pl.DataFrame:
    """Allocated and reserved memory over time per component of memory_record (PTA+GE, PTA, GE, APP, ...),
    the largest value per time bucket (at most ``bucket_count`` per component), so no peak is lost.

    Columns: component, is_total (the component _memory_total judges), offset_ms, allocated_mb (NULL
    where the component writes none, as APP), reserved_mb. Empty when memory was not collected.
    """
    sql = f"""WITH {_ORIGIN},
    m AS (SELECT component, ts_ns, allocated_mb, reserved_mb FROM memory_records
          WHERE run_id = $run AND source = 'memory_record' AND ts_ns IS NOT NULL AND component IS NOT NULL
            AND (allocated_mb IS NOT NULL OR reserved_mb IS NOT NULL)),
    grid AS (SELECT min(ts_ns) AS c0, greatest(1, ceil((max(ts_ns) - min(ts_ns) + 1) / $n))::BIGINT AS width FROM m),
    total AS (SELECT DISTINCT component FROM _memory_total WHERE run_id = $run)
    SELECT m.component, m.component IN (SELECT component FROM total) AS is_total,
           round((min(m.ts_ns) - any_value(t0)) / 1e6, 6) AS offset_ms,
           round(max(allocated_mb), 3) AS allocated_mb, round(max(reserved_mb), 3) AS reserved_mb
    FROM m, grid, origin GROUP BY m.component, (m.ts_ns - c0) // width
    ORDER BY is_total DESC, m.component, offset_ms"""
    order = "is_total DESC, component, offset_ms"
    return _query(con, sql, {"run": run_id, "n": bucket_count}, order, rows_from=("memory_records",))


def step_starts(con: duckdb.DuckDBPyConnection, run_id: str, limit: int = 500) -> pl.DataFrame:
    """Where each step starts and ends on the time axis. Columns: step_id, start_ms, end_ms."""
    sql = f"""WITH {_ORIGIN}
    SELECT step_id, round((min(start_ns) - any_value(t0)) / 1e6, 6) AS start_ms,
           round((max(end_ns) - any_value(t0)) / 1e6, 6) AS end_ms
    FROM steps, origin WHERE run_id = $run AND step_id IS NOT NULL AND start_ns IS NOT NULL AND end_ns > start_ns
    GROUP BY step_id ORDER BY start_ms, step_id LIMIT $limit"""
    return _query(con, sql, {"run": run_id, "limit": limit}, "start_ms, step_id")


def core_activity(con: duckdb.DuckDBPyConnection, run_id: str, bucket_count: int = 1000) -> pl.DataFrame:
    """The cores' clock (aicore_freq, MHz) and sampled utilisation (aicore_utilization /
    aivector_utilization, %, the 'Average' instance where written, else the mean over the cores) over time,
    averaged per bucket.

    Columns: counter, offset_ms, value. Empty when the export has neither series.
    """
    sql = f"""WITH {_ORIGIN},
    c AS (SELECT counter, ts_ns, value FROM counters
          WHERE run_id = $run AND value IS NOT NULL AND ts_ns IS NOT NULL
            AND (counter = 'aicore_freq' OR (counter IN ('aicore_utilization', 'aivector_utilization')
                 AND (coalesce(instance, 'Average') = 'Average' OR NOT EXISTS (
                     SELECT 1 FROM counters a WHERE a.run_id = $run AND a.counter = counters.counter
                                                AND a.instance = 'Average'))))),
    grid AS (SELECT min(ts_ns) AS c0, greatest(1, ceil((max(ts_ns) - min(ts_ns) + 1) / $n))::BIGINT AS width FROM c)
    SELECT counter, round((min(ts_ns) - any_value(t0)) / 1e6, 6) AS offset_ms, round(avg(value), 3) AS value
    FROM c, grid, origin GROUP BY counter, (ts_ns - c0) // width ORDER BY counter, offset_ms"""
    return _query(con, sql, {"run": run_id, "n": bucket_count}, "counter, offset_ms", rows_from=("counters",))


def sampled_core_utilization(con: duckdb.DuckDBPyConnection, run_id: str) -> pl.DataFrame:
    """The sample-based per-core averages over the whole window (core_utilization, not a time series):
    per core kind and metric, the 'Average' row and the spread over cores.

    Columns: core_kind, metric, average, lowest, highest, cores.
    """
    sql = """SELECT core_kind, metric, round(max(value) FILTER (WHERE core_id = 'Average'), 4) AS average,
           round(min(value) FILTER (WHERE core_id <> 'Average'), 4) AS lowest,
           round(max(value) FILTER (WHERE core_id <> 'Average'), 4) AS highest,
           count(*) FILTER (WHERE core_id <> 'Average') AS cores
    FROM core_utilization WHERE run_id = $run AND value IS NOT NULL
    GROUP BY core_kind, metric ORDER BY core_kind, metric"""
    return _query(con, sql, {"run": run_id}, "core_kind, metric")


def memory_peak(con: duckdb.DuckDBPyConnection, run_id: str) -> pl.DataFrame:
    """The run's memory peak per device (_memory_peak), with the peak's time on the shared axis."""
    sql = f"""WITH {_ORIGIN}
    SELECT device_id, component, samples, peak_allocated_mb,
           round((peak_allocated_ns - t0) / 1e6, 6) AS peak_allocated_ms,
           reserved_at_peak_mb, peak_reserved_mb, round((peak_reserved_ns - t0) / 1e6, 6) AS peak_reserved_ms,
           allocated_at_reserved_mb, app_reserved_mb, device_memory_mb, allocated_share, reserved_share, used_share
    FROM _memory_peak, origin WHERE run_id = $run ORDER BY device_id"""
    return _query(con, sql, {"run": run_id}, "device_id", rows_from=("_memory_peak",))


def memory_at_peak(con: duckdb.DuckDBPyConnection, run_id: str, limit: int = 15) -> pl.DataFrame:
    """The ``limit`` largest allocations alive at the peak (_memory_at_peak), largest first, with the
    total of all of them. Columns: device_id, op_name, size_mb, alloc_ms, release_ms, alive (count of
    all allocations alive at the peak), alive_mb (their sum)."""
    sql = f"""WITH {_ORIGIN},
    a AS (SELECT *, count(*) OVER (PARTITION BY device_id) AS alive,
                 sum(size_kb) OVER (PARTITION BY device_id) / 1024 AS alive_mb
          FROM _memory_at_peak WHERE run_id = $run)
    SELECT device_id, op_name, round(size_kb / 1024, 3) AS size_mb, round((alloc_ns - t0) / 1e6, 6) AS alloc_ms,
           round((release_ns - t0) / 1e6, 6) AS release_ms, alive, round(alive_mb, 3) AS alive_mb
    FROM a, origin ORDER BY device_id, size_kb DESC, alloc_ns, op_name LIMIT $limit"""
    order = "device_id, size_mb DESC, alloc_ms, op_name"
    return _query(con, sql, {"run": run_id, "limit": limit}, order, rows_from=("_memory_at_peak",))
