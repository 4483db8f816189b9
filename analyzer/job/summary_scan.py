"""The job's summary tables from every rank's small files, each kind read in one DuckDB scan.

step_trace_time.csv -> job_steps; communication.json -> job_comm_bandwidth and job_comm_ops;
communication_matrix.json -> the raw links (matrix_links.py maps them to global ranks). The files
of all ranks are given to one read_csv / read_json_objects call; a file DuckDB cannot read is found
by reading the files one by one only after that scan failed, named as a problem, and left out.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa

from analyzer.ingest.memory_budget import current_limit_bytes
from analyzer.ingest.model import Problem

# DuckDB's JSON reader takes a 32 MiB buffer per thread, twice over while it reads; under a small
# memory limit (the lean budget of a job of small files) the scans run on one thread instead of failing.
_JSON_BYTES_PER_THREAD = 80 << 20

_STEP_COLUMNS = {
    "step_id": ("Step", "BIGINT"),
    "computing_us": ("Computing", "DOUBLE"),
    "comm_not_overlapped_us": ("Communication(Not Overlapped)", "DOUBLE"),
    "overlapped_us": ("Overlapped", "DOUBLE"),
    "comm_us": ("Communication", "DOUBLE"),
    "free_us": ("Free", "DOUBLE"),
    "stage_us": ("Stage", "DOUBLE"),
    "bubble_us": ("Bubble", "DOUBLE"),
    "comm_not_overlapped_excl_receive_us": ("Communication(Not Overlapped and Exclude Receive)", "DOUBLE"),
    "preparing_us": ("Preparing", "DOUBLE"),
}

# One row per (file, step, kind, op) of communication.json or communication_matrix.json.
_OPS = """
WITH f AS (
    SELECT r.rank, j.json FROM read_json_objects($paths, filename = true, format = 'auto',
                                                 maximum_object_size = $max_object_bytes) j
    JOIN _job_files r ON r.path = j.filename
),
s AS (SELECT rank, unnest(map_entries(json::MAP(VARCHAR, JSON))) AS st FROM f),
k AS (SELECT rank, st.key AS step_key, unnest(map_entries(st.value::MAP(VARCHAR, JSON))) AS kd
      FROM s WHERE json_type(st.value) = 'OBJECT'),
o AS (SELECT rank, step_key, kd.key AS op_kind, unnest(map_entries(kd.value::MAP(VARCHAR, JSON))) AS op
      FROM k WHERE kd.key IN ('collective', 'p2p') AND json_type(kd.value) = 'OBJECT')
SELECT rank, TRY_CAST(regexp_extract(step_key, '(\\d+)$', 1) AS BIGINT) AS step_id, op_kind,
       op.key AS op_key, op.value AS op
FROM o WHERE op.key <> 'Total Op Info' AND json_type(op.value) = 'OBJECT'
"""

_BANDWIDTH = """
SELECT $job AS run_id, rank, step_id, split_part(op_key, '@', 2) AS group_name, split_part(op_key, '@', 1) AS op_name,
       t.key AS transport,
       TRY_CAST(t.value ->> '$."Transit Size(MB)"' AS DOUBLE) AS transit_size_mb,
       TRY_CAST(t.value ->> '$."Transit Time(ms)"' AS DOUBLE) * 1000 AS transit_us,
       TRY_CAST(t.value ->> '$."Bandwidth(GB/s)"' AS DOUBLE) AS bandwidth_gb_per_s,
       TRY_CAST(t.value ->> '$."Large Packet Ratio"' AS DOUBLE) AS large_packet_ratio
FROM (SELECT rank, step_id, op_key,
             unnest(map_entries((op -> '$."Communication Bandwidth Info"')::MAP(VARCHAR, JSON))) AS t
      FROM _job_comm_raw WHERE json_type(op -> '$."Communication Bandwidth Info"') = 'OBJECT')
WHERE TRY_CAST(t.value ->> '$."Transit Size(MB)"' AS DOUBLE) > 0
"""

# SDMA sums the on-node links (HCCS, PCIE, SIO) in the files seen: data moved is RDMA + the links,
# and the main transport is the link with the most data (SDMA only when no link is itemised), as in
# analyzer/ingest/communication_json.py.
_COMM_OPS = """
WITH b AS (
    SELECT rank, step_id, group_name, op_name,
           sum(transit_size_mb) FILTER (transport <> 'SDMA') AS link_mb,
           max(transit_size_mb) FILTER (transport = 'SDMA') AS sdma_mb,
           arg_max(transport, (transit_size_mb, -list_position(['HCCS', 'RDMA', 'PCIE', 'SIO'], transport)))
               FILTER (transport <> 'SDMA') AS link,
           arg_max(bandwidth_gb_per_s, (transit_size_mb, -list_position(['HCCS', 'RDMA', 'PCIE', 'SIO'], transport)))
               FILTER (transport <> 'SDMA') AS link_bw,
           max(bandwidth_gb_per_s) FILTER (transport = 'SDMA') AS sdma_bw
    FROM job_comm_bandwidth WHERE run_id = $job GROUP BY ALL
),
o AS (
    SELECT rank, step_id, op_kind, split_part(op_key, '@', 2) AS group_name, split_part(op_key, '@', 1) AS op_name,
           CAST(TRY_CAST(op ->> '$."Communication Time Info"."Start Timestamp(us)"' AS DECIMAL(22, 3)) * 1000 AS BIGINT)
               AS start_ns,
           TRY_CAST(op ->> '$."Communication Time Info"."Elapse Time(ms)"' AS DOUBLE) * 1000 AS elapse_us,
           TRY_CAST(op ->> '$."Communication Time Info"."Transit Time(ms)"' AS DOUBLE) * 1000 AS transit_us,
           TRY_CAST(op ->> '$."Communication Time Info"."Wait Time(ms)"' AS DOUBLE) * 1000 AS wait_us,
           TRY_CAST(op ->> '$."Communication Time Info"."Synchronization Time(ms)"' AS DOUBLE) * 1000 AS sync_us,
           TRY_CAST(op ->> '$."Communication Time Info"."Idle Time(ms)"' AS DOUBLE) * 1000 AS idle_us
    FROM _job_comm_raw
)
SELECT $job AS run_id, o.rank, o.step_id, o.op_kind, o.group_name, o.op_name,
       CAST(row_number() OVER (PARTITION BY o.rank, o.step_id, o.group_name ORDER BY o.start_ns NULLS LAST, o.op_name)
            AS INTEGER) AS op_seq,
       CAST(count(*) OVER (PARTITION BY o.step_id, o.group_name, o.op_name) AS INTEGER) AS op_rank_count,
       o.start_ns,
       (o.start_ns - min(o.start_ns) OVER (PARTITION BY o.step_id, o.group_name, o.op_name)) / 1000.0 AS arrival_us,
       o.elapse_us, o.transit_us, o.wait_us, o.sync_us, o.idle_us,
       coalesce(b.link_mb, b.sdma_mb) AS transit_size_mb,
       CASE WHEN b.link IS NOT NULL THEN b.link_bw ELSE b.sdma_bw END AS bandwidth_gb_per_s,
       coalesce(b.link, CASE WHEN b.sdma_mb > 0 THEN 'SDMA' END) AS transport
FROM o LEFT JOIN b USING (rank, step_id, group_name, op_name)
"""


def _register_files(con: duckdb.DuckDBPyConnection, files: list[tuple[Path, int]]) -> None:
    con.register("_job_files", pa.table({"path": [str(p) for p, _ in files], "rank": [r for _, r in files]}))


def _readable(
    con: duckdb.DuckDBPyConnection, sql: str, files: list[tuple[Path, int]], params: dict
) -> tuple[list, list]:
    """Files the scan ``sql`` (a ``$paths`` list) can read, and a Problem for each it cannot.

    Only called after the scan of all files failed: it reads them one by one to name the bad ones."""
    good, problems = [], []
    for path, rank in files:
        _register_files(con, [(path, rank)])
        try:
            con.execute(f"SELECT count(*) FROM ({sql})", {**params, "paths": [str(path)]}).fetchall()
            good.append((path, rank))
        except duckdb.Error as exc:
            first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
            problems.append(
                Problem(str(path), "", "error", f"rank {rank}: cannot read the file: {first}", "re-export this rank")
            )
    return good, problems


@contextmanager
def json_scan_threads(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Run the block with as many threads as the memory limit leaves JSON buffers for (at least one)."""
    threads = con.execute("SELECT current_setting('threads')").fetchall()[0][0]
    limit = current_limit_bytes(con)
    fit = max(1, min(threads, (limit or threads * _JSON_BYTES_PER_THREAD) // _JSON_BYTES_PER_THREAD))
    if fit == threads:
        yield
        return
    con.execute(f"SET threads = {int(fit)}")
    try:
        yield
    finally:
        con.execute(f"SET threads = {int(threads)}")


def scan_files(
    con: duckdb.DuckDBPyConnection, sql: str, files: list[tuple[Path, int]], target: str, params: dict | None = None
) -> list[Problem]:
    """CREATE TEMP TABLE ``target`` AS the rows of ``sql`` over all ``files`` in one scan; on a read
    error, over the readable files only (no table when none is). ``sql`` reads ``$paths`` and joins
    ``_job_files`` (path, rank)."""
    con.execute(f"DROP TABLE IF EXISTS {target}")
    problems: list[Problem] = []
    try:
        for attempt in range(2):
            if not files:
                break
            _register_files(con, files)
            try:
                con.execute(
                    f"CREATE TEMP TABLE {target} AS {sql}", {**(params or {}), "paths": [str(p) for p, _ in files]}
                )
                break
            except duckdb.Error:
                if attempt:
                    raise
                files, problems = _readable(con, sql, files, params or {})
    finally:
        con.unregister("_job_files")
    return problems


def step_sql(con: duckdb.DuckDBPyConnection, paths: list[str]) -> str:
    """The job_steps SELECT over step_trace_time.csv files whose union header is read first (the
    header varies by version; a column no file has is NULL)."""
    header = {
        d[0]
        for d in con.execute(
            "DESCRIBE SELECT * FROM read_csv($paths, union_by_name = true, all_varchar = true, header = true)",
            {"paths": paths},
        ).fetchall()
    }
    cols = ", ".join(
        f'TRY_CAST(trim(s."{raw}") AS {type_}) AS {name}' if raw in header else f"CAST(NULL AS {type_}) AS {name}"
        for name, (raw, type_) in _STEP_COLUMNS.items()
    )
    return (
        f"SELECT $job AS run_id, r.rank, {cols} FROM read_csv($paths, filename = true, union_by_name = true, "
        "all_varchar = true, header = true) s JOIN _job_files r ON r.path = s.filename"
    )


def load_job_summaries(
    con: duckdb.DuckDBPyConnection, job_id: str, kinds: dict[str, list[tuple[Path, int]]]
) -> list[Problem]:
    """Fill job_steps, job_comm_bandwidth and job_comm_ops of one job, and the temp table
    _job_matrix_raw (rank, step_id, op_kind, op_key, op) for the links; ``kinds`` maps a file kind
    (step_trace_time, communication, communication_matrix) to its (path, rank) pairs."""
    problems: list[Problem] = []
    steps = kinds.get("step_trace_time", [])
    if steps:
        try:
            sql = step_sql(con, [str(p) for p, _ in steps])
        except duckdb.Error:
            sql = None
        if sql:
            problems += scan_files(con, sql, steps, "_job_steps", {"job": job_id})
            if _exists(con, "_job_steps"):
                con.execute("INSERT INTO job_steps BY NAME SELECT * FROM _job_steps")
                con.execute("DROP TABLE _job_steps")
    comm = kinds.get("communication", [])
    problems += scan_files(con, _OPS, comm, "_job_comm_raw", {"max_object_bytes": _largest(comm)})
    if _exists(con, "_job_comm_raw"):
        con.execute(f"INSERT INTO job_comm_bandwidth BY NAME {_BANDWIDTH}", {"job": job_id})
        con.execute(f"INSERT INTO job_comm_ops BY NAME {_COMM_OPS}", {"job": job_id})
        con.execute("DROP TABLE _job_comm_raw")
    matrix = kinds.get("communication_matrix", [])
    problems += scan_files(con, _OPS, matrix, "_job_matrix_raw", {"max_object_bytes": _largest(matrix)})
    return problems


def _exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(con.execute("SELECT 1 FROM duckdb_tables() WHERE table_name = ? AND temporary", [table]).fetchall())


def _largest(files: list[tuple[Path, int]]) -> int:
    """read_json_objects' maximum_object_size for these files: each file is one object, and DuckDB
    allocates twice that size per buffer, so it is the largest file, not a fixed large value."""
    sizes = [p.stat().st_size for p, _ in files if p.is_file()]
    return max([16 * 2**20, *(s + 1024 for s in sizes)])
