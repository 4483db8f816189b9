"""The Diagnosis' memory summary: per device the memory peak and the allocations alive at it.

Read from the rules' helper tables (_memory_peak, _memory_at_peak: analyzer/rule_engine/views/memory.sql),
the same numbers the memory rules judge and the run page shows; times in ms from the run's first device
task, as on the page's time axis.
"""

from __future__ import annotations

from typing import Any

import duckdb

HOLDERS_SHOWN = 15  # the largest allocations alive at the peak, as on the run page

# Parameter $runs: the runs read together. Each run's time origin: its first device task, else its first
# memory sample (the page's origin).
_ORIGIN = """runs AS (SELECT unnest($runs::VARCHAR[]) AS run_id),
origin AS (SELECT runs.run_id, coalesce(o.t0, m.t0) AS t0 FROM runs
           LEFT JOIN (SELECT run_id, min(start_ns) AS t0 FROM ops GROUP BY run_id) o USING (run_id)
           LEFT JOIN (SELECT run_id, min(ts_ns) AS t0 FROM memory_records GROUP BY run_id) m USING (run_id))"""

_PEAKS = f"""WITH {_ORIGIN},
alive AS (SELECT run_id, device_id, count(*) AS alive_count, round(sum(size_kb) / 1024, 3) AS alive_mb
          FROM _memory_at_peak WHERE run_id IN (SELECT run_id FROM runs) GROUP BY run_id, device_id)
SELECT p.run_id, CASE WHEN p.device_id < 0 THEN NULL ELSE p.device_id END AS device_id, p.device_id AS _device,
       p.component AS series, p.samples, round(p.peak_allocated_mb, 3) AS peak_allocated_mb,
       round((p.peak_allocated_ns - t0) / 1e6, 3) AS peak_allocated_ms,
       round(p.reserved_at_peak_mb, 3) AS reserved_at_peak_mb,
       round(p.peak_reserved_mb, 3) AS peak_reserved_mb, round((p.peak_reserved_ns - t0) / 1e6, 3) AS peak_reserved_ms,
       round(p.allocated_at_reserved_mb, 3) AS allocated_at_reserved_mb,
       round(p.app_reserved_mb, 3) AS process_reserved_mb, round(p.device_memory_mb, 3) AS device_memory_mb,
       round(p.allocated_share, 4) AS allocated_share, round(p.reserved_share, 4) AS reserved_share,
       round(p.used_share, 4) AS used_share, coalesce(a.alive_count, 0) AS alive_count,
       coalesce(a.alive_mb, 0.0) AS alive_mb
FROM _memory_peak p JOIN origin USING (run_id) LEFT JOIN alive a USING (run_id, device_id)
ORDER BY p.run_id, p.device_id"""

# The largest allocations alive at each device's peak: the first $limit by size (then time, name) of each.
_HOLDERS = f"""WITH {_ORIGIN},
ranked AS (SELECT run_id, device_id, op_name, size_kb, alloc_ns, release_ns,
                  row_number() OVER (PARTITION BY run_id, device_id ORDER BY size_kb DESC, alloc_ns, op_name) AS n
           FROM _memory_at_peak WHERE run_id IN (SELECT run_id FROM runs) AND device_id IS NOT NULL)
SELECT run_id, device_id, op_name, round(size_kb / 1024, 3) AS size_mb, round((alloc_ns - t0) / 1e6, 3) AS alloc_ms,
       round((release_ns - t0) / 1e6, 3) AS release_ms
FROM ranked JOIN origin USING (run_id) WHERE n <= $limit ORDER BY run_id, device_id, n"""


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    cursor = con.execute(sql, params)
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def memory_summaries(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, dict[str, Any] | None]:
    """Per run, {"devices": [...]}: per device the series judged, its peak allocated / reserved (MB, ms,
    share of the chip's memory), the process' reserved peak, and the allocations of operator_memory alive
    at the peak (count, MB, the largest ``HOLDERS_SHOWN``); None when the run has no memory records.
    Read with one query for all the runs. Needs the helper views."""
    holders: dict[tuple[str, Any], list[dict[str, Any]]] = {}
    for row in _rows(con, _HOLDERS, {"runs": run_ids, "limit": HOLDERS_SHOWN}):
        holders.setdefault((row.pop("run_id"), row.pop("device_id")), []).append(row)
    devices: dict[str, list[dict[str, Any]]] = {}
    for device in _rows(con, _PEAKS, {"runs": run_ids}):
        run_id = device.pop("run_id")
        device["holders"] = holders.get((run_id, device.pop("_device")), [])
        devices.setdefault(run_id, []).append(device)
    return {r: {"devices": devices[r]} if r in devices else None for r in run_ids}
