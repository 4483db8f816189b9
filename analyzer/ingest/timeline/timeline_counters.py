"""Counter ('C') events of a Chrome trace -> the counters table, with normalized counter names and units.

Each numeric arg of a counter event is one sample (``{"Read(MB/s)": 12.5}``); the unit comes
from the arg key (``MB/s`` from ``Read(MB/s)``, or the key itself for ``KB`` / ``MHz``). Args
named like ids (``acc_id``) are not samples: they name the instance of the series.
"""

from __future__ import annotations

import duckdb

from analyzer.ingest.sql_values import decimal_us_to_ns
from analyzer.ingest.timeline.timeline_events import (
    BY_EXPORT,
    BY_FILE,
    RUN_OF_FILE,
    process_names_sql,
    track_device_sql,
)

_BARE_UNITS = ("KB", "MB", "GB", "B", "MHz", "GHz", "%", "ns", "us", "ms")
_HBM = r"^(HBM|DDR) ?(\d*)/(Read|Write)$"
_LLC = r"^LLC ?(\d*) (Read|Write)/(Throughput|Hit Rate)$"
_NPU_MEM = r"^(APP|Device)/(.+)$"
_UTILIZATION = {"AI Core Utilization": "aicore_utilization", "AI Vector Core Utilization": "aivector_utilization"}


def _samples_sql(raw: str, by: str) -> str:
    """One row per (counter event, arg): name, process, ts, key, numeric value, id-like arg of the event."""
    return f"""
        SELECT c.file_no, c.name, p.process, {decimal_us_to_ns("c.ts")} AS ts_ns, c.event_no, c.pid,
            kv.key AS key, TRY_CAST(json_extract_string(kv.value, '$') AS DOUBLE) AS value,
            regexp_matches(lower(kv.key), '(^|[_ ])id$') AS is_id
        FROM (SELECT rowid AS event_no, file_no, name, pid, ts, args FROM {raw}
              WHERE ph = 'C' AND ts IS NOT NULL AND json_type(args) = 'OBJECT') c
        LEFT JOIN ({process_names_sql(raw, by)}) p USING ({by}),
        LATERAL (SELECT unnest(map_entries(CAST(c.args AS MAP(VARCHAR, JSON))), recursive := true)) kv
    """


def _series_sql(raw: str, by: str) -> str:
    """Value samples with their event's instance id and how many value args the event has."""
    return f"""
        SELECT *,
            max(CASE WHEN is_id THEN CAST(value AS BIGINT)::VARCHAR END) OVER (PARTITION BY event_no) AS id_instance,
            count(*) FILTER (WHERE NOT is_id) OVER (PARTITION BY event_no) AS value_args
        FROM ({_samples_sql(raw, by)})
    """


def _counter_sql() -> str:
    util = " ".join(f"WHEN process = '{p}' THEN '{c}'" for p, c in _UTILIZATION.items())
    return f"""CASE
        WHEN regexp_matches(name, '{_HBM}')
            THEN lower(regexp_extract(name, '{_HBM}', 1)) || '_' || lower(regexp_extract(name, '{_HBM}', 3))
        WHEN regexp_matches(name, '{_LLC}') AND regexp_extract(name, '{_LLC}', 3) = 'Hit Rate' THEN 'llc_hit_rate'
        WHEN regexp_matches(name, '{_LLC}') THEN 'llc_' || lower(regexp_extract(name, '{_LLC}', 2)) || '_throughput'
        WHEN process = 'NPU MEM' AND regexp_matches(name, '{_NPU_MEM}')
            THEN 'npu_mem_' || lower(regexp_extract(name, '{_NPU_MEM}', 1))
        WHEN name = 'AI Core Freq' OR process = 'AI Core Freq' THEN 'aicore_freq'
        {util}
        ELSE 'other:' || name || CASE WHEN value_args > 1 THEN '/' || key ELSE '' END
    END"""


def _instance_sql() -> str:
    utils = ", ".join(f"'{p}'" for p in _UTILIZATION)
    return f"""CASE
        WHEN regexp_matches(name, '{_HBM}') THEN NULLIF(regexp_extract(name, '{_HBM}', 2), '')
        WHEN regexp_matches(name, '{_LLC}') THEN NULLIF(regexp_extract(name, '{_LLC}', 1), '')
        WHEN process = 'NPU MEM' AND regexp_matches(name, '{_NPU_MEM}') THEN regexp_extract(name, '{_NPU_MEM}', 2)
        WHEN process IN ({utils}) AND name <> process THEN name
        WHEN process IN ({utils}) AND value_args > 1 THEN key
        ELSE id_instance
    END"""


def _unit_sql() -> str:
    bare = ", ".join(f"'{u}'" for u in _BARE_UNITS)
    return f"coalesce(NULLIF(regexp_extract(key, '\\(([^)]*)\\)\\s*$', 1), ''), CASE WHEN key IN ({bare}) THEN key END)"


def insert_counters(con: duckdb.DuckDBPyConnection, raw: str, run_id: str) -> int:
    """Insert every numeric counter sample of the raw table into counters; returns rows.

    A trace without counter events (most torch_npu traces) is told by one cheap query first: the
    INSERT, long to plan however few rows it reads, then does not run."""
    return _insert(con, raw, "$run_id::VARCHAR", {"run_id": run_id}, BY_EXPORT)


def insert_counters_of_files(con: duckdb.DuckDBPyConnection, raw: str, runs: list[str]) -> int:
    """``insert_counters`` of a raw table holding many runs' files, file ``file_no`` being run ``runs[file_no]``'s."""
    return _insert(con, raw, RUN_OF_FILE, {"runs": runs}, BY_FILE)


def _insert(con: duckdb.DuckDBPyConnection, raw: str, run_sql: str, params: dict[str, object], by: str) -> int:
    if not con.execute(f"SELECT EXISTS (SELECT 1 FROM {raw} WHERE ph = 'C')").fetchall()[0][0]:
        return 0
    return con.execute(
        f"""
        INSERT INTO counters BY NAME
        SELECT {run_sql} AS run_id, {track_device_sql("pid")} AS device_id, {_counter_sql()} AS counter,
            {_instance_sql()} AS instance, ts_ns, value, {_unit_sql()} AS unit
        FROM ({_series_sql(raw, by)})
        WHERE NOT is_id AND value IS NOT NULL AND ts_ns IS NOT NULL
        -- The windows above give their rows in an order of their own: the rows go in in the trace's order.
        ORDER BY event_no, key
        """,
        params,
    ).fetchall()[0][0]
