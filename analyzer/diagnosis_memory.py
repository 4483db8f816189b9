"""The Diagnosis' memory summary: per device the memory peak and the allocations alive at it.

Read from the rules' helper tables (_memory_peak, _memory_at_peak: analyzer/rule_engine/views/memory.sql),
the same numbers the memory rules judge and the run page shows; times in ms from the run's first device
task, as on the page's time axis.
"""

from __future__ import annotations

from typing import Any

import duckdb

HOLDERS_SHOWN = 15  # the largest allocations alive at the peak, as on the run page

# The run's time origin: its first device task, else its first memory sample (the page's origin).
_ORIGIN = """origin AS (SELECT coalesce((SELECT min(start_ns) FROM ops WHERE run_id = $run),
                                 (SELECT min(ts_ns) FROM memory_records WHERE run_id = $run)) AS t0)"""

_PEAKS = f"""WITH {_ORIGIN},
alive AS (SELECT device_id, count(*) AS alive_count, round(sum(size_kb) / 1024, 3) AS alive_mb
          FROM _memory_at_peak WHERE run_id = $run GROUP BY device_id)
SELECT CASE WHEN p.device_id < 0 THEN NULL ELSE p.device_id END AS device_id, p.device_id AS _device,
       p.component AS series, p.samples, round(p.peak_allocated_mb, 3) AS peak_allocated_mb,
       round((p.peak_allocated_ns - t0) / 1e6, 3) AS peak_allocated_ms,
       round(p.reserved_at_peak_mb, 3) AS reserved_at_peak_mb,
       round(p.peak_reserved_mb, 3) AS peak_reserved_mb, round((p.peak_reserved_ns - t0) / 1e6, 3) AS peak_reserved_ms,
       round(p.allocated_at_reserved_mb, 3) AS allocated_at_reserved_mb,
       round(p.app_reserved_mb, 3) AS process_reserved_mb, round(p.device_memory_mb, 3) AS device_memory_mb,
       round(p.allocated_share, 4) AS allocated_share, round(p.reserved_share, 4) AS reserved_share,
       round(p.used_share, 4) AS used_share, coalesce(a.alive_count, 0) AS alive_count,
       coalesce(a.alive_mb, 0.0) AS alive_mb
FROM _memory_peak p LEFT JOIN alive a USING (device_id), origin WHERE p.run_id = $run ORDER BY p.device_id"""

_HOLDERS = f"""WITH {_ORIGIN}
SELECT op_name, round(size_kb / 1024, 3) AS size_mb, round((alloc_ns - t0) / 1e6, 3) AS alloc_ms,
       round((release_ns - t0) / 1e6, 3) AS release_ms
FROM _memory_at_peak, origin WHERE run_id = $run AND device_id = $device
ORDER BY size_kb DESC, alloc_ns, op_name LIMIT $limit"""


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    cursor = con.execute(sql, params)
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def memory_summary(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, Any] | None:
    """{"devices": [...]}: per device the series judged, its peak allocated / reserved (MB, ms, share of
    the chip's memory), the process' reserved peak, and the allocations of operator_memory alive at the
    peak (count, MB, the largest ``HOLDERS_SHOWN``); None when the run has no memory records. Needs the
    helper views."""
    devices = _rows(con, _PEAKS, {"run": run_id})
    for device in devices:
        params = {"run": run_id, "device": device.pop("_device"), "limit": HOLDERS_SHOWN}
        device["holders"] = _rows(con, _HOLDERS, params)
    return {"devices": devices} if devices else None
