"""The job's summary tables from every rank's small files, each kind read in one DuckDB scan.

step_trace_time.csv -> job_steps; communication.json -> job_comm_bandwidth and job_comm_ops;
communication_matrix.json -> the raw links (matrix_links.py maps them to global ranks). The files
of all ranks (of all the jobs read together) are given to one read_text call (the JSON parsed once per
file by DuckDB); a file that cannot be read is found by reading the files one by one only after that
scan failed, named as a problem, and left out. A rank without one of these files gives the same rows
from its analysis.db (analysis_db_scan.py), added to the same raw tables before they are checked and typed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import duckdb
import pyarrow as pa

from analyzer.errors import first_line
from analyzer.ingest.csv.declared_tables import DECLARED
from analyzer.ingest.model import Problem
from analyzer.job import analysis_db_scan as db
from analyzer.job.summary_shapes import COMM_SHAPE, MATRIX_SHAPE
from analyzer.job.value_checks import Field, checked, damaged_values

# step_trace_time.csv columns as ingest declares them: name -> (header, SQL type); the device column is
# the rank's own and not read here.
_STEP_COLUMNS = {
    f.target: (f.headers[0], f.how.upper()) for f in DECLARED["step_trace_time"].fields if f.target != "device_id"
}

# One row per (file, step, kind, op key); the value is the typed entry (a struct or a map). The rows come in the
# order of the files, then of their entries in the file (entry_no, numbered as they are unnested): a job's sums
# add them in that order, which is then the same whatever else is read with it (a join's output follows
# whichever side DuckDB builds its hash table of).
_OPS = """
WITH f AS (SELECT filename, json_transform(content::JSON, $shape) AS doc FROM read_text($paths)),
s AS (SELECT filename, unnest(map_entries(doc)) AS st FROM f),
k AS (SELECT filename, st.key AS step_key, unnest(map_entries(st.value)) AS kd FROM s),
o AS (SELECT filename, step_key, kd.key AS op_kind, unnest(map_entries(kd.value)) AS op
      FROM k WHERE kd.key IN ('collective', 'p2p')),
n AS (SELECT *, row_number() OVER () AS entry_no FROM o)
SELECT r.rank, r.path, NULL::VARCHAR AS db_table, TRY_CAST(regexp_extract(step_key, '(\\d+)$', 1) AS BIGINT) AS step_id,
       op_kind, op.key AS op_key, op.value AS op
FROM n JOIN _job_files r ON r.path = n.filename
WHERE op.key <> 'Total Op Info' AND op.value IS NOT NULL
ORDER BY r.file_no, n.entry_no
"""

_TIME = 'op."Communication Time Info"'
# The numbers of communication.json as value_checks reads them: per op (over _job_comm_raw) and per op
# and transport (over _job_comm_bw_raw).
OP_FIELDS = {
    col: Field(name, f'{_TIME}."{name}"', 1000.0, "time_us", db.TIME_NAMES[name])
    for col, name in (
        ("elapse_us", "Elapse Time(ms)"),
        ("transit_us", "Transit Time(ms)"),
        ("wait_us", "Wait Time(ms)"),
        ("sync_us", "Synchronization Time(ms)"),
        ("idle_us", "Idle Time(ms)"),
    )
}
_START = Field("Start Timestamp(us)", f'{_TIME}."Start Timestamp(us)"', db_name=db.TIME_NAMES["Start Timestamp(us)"])
BW_FIELDS = {
    col: Field(name, f't.value."{name}"', scale, kind, db.TRANSPORT_NAMES[name])
    for col, name, scale, kind in (
        ("transit_size_mb", "Transit Size(MB)", 1.0, "size_mb"),
        ("transit_us", "Transit Time(ms)", 1000.0, "time_us"),
        ("bandwidth_gb_per_s", "Bandwidth(GB/s)", 1.0, "gb_per_s"),
        ("large_packet_ratio", "Large Packet Ratio", 1.0, "any"),
    )
}
_BW_RAW = """
SELECT rank, path, db_table, step_id, op_key, unnest(map_entries(op."Communication Bandwidth Info")) AS t
FROM _job_comm_raw
"""
_BANDWIDTH = f"""
SELECT $job AS run_id, rank, step_id, split_part(op_key, '@', 2) AS group_name, split_part(op_key, '@', 1) AS op_name,
       t.key AS transport, {", ".join(f"{checked(f)} AS {col}" for col, f in BW_FIELDS.items())}
FROM _job_comm_bw_raw
WHERE list_contains($paths, path) AND {checked(BW_FIELDS["transit_size_mb"])} > 0
"""

# SDMA sums the on-node links (HCCS, PCIE, SIO) in the files seen: data moved is RDMA + the links,
# and the main transport is the link with the most data (SDMA only when no link is itemised), as in
# analyzer/ingest/communication/communication_json.py.
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
           CASE WHEN {start} IS NOT NULL THEN CAST(TRY_CAST({start_raw} AS DECIMAL(22, 3)) * 1000 AS BIGINT) END
               AS start_ns,
           {times}
    FROM _job_comm_raw WHERE list_contains($paths, path)
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
""".format(
    start=checked(_START),
    start_raw=_START.raw,
    times=", ".join(f"{checked(f)} AS {col}" for col, f in OP_FIELDS.items()),
)


def _register_files(con: duckdb.DuckDBPyConnection, files: list[tuple[Path, int]]) -> None:
    """The files a scan reads, as the table ``_job_files`` (path, rank, file_no: their order)."""
    paths, ranks = [str(p) for p, _ in files], [r for _, r in files]
    con.register("_job_files", pa.table({"path": paths, "rank": ranks, "file_no": list(range(len(files)))}))


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
            first = first_line(exc, 200)
            problems.append(
                Problem(str(path), "", "error", f"rank {rank}: cannot read the file: {first}", "re-export this rank")
            )
    return good, problems


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


STEP_FIELDS = {
    name: Field(raw, f'"{name}"', kind="id" if name == "step_id" else "time_us", db_name=db.STEP_COLUMNS[name])
    for name, (raw, _) in _STEP_COLUMNS.items()
}


def step_sql() -> str:
    """The raw rows of step_trace_time.csv files read as text (rank, path, line and each column's cell,
    still text): the header of each file says where each column is (it varies by version; a column a
    file lacks is NULL). The files hold numbers only, never quoted commas, so a split on ',' is the CSV
    parse; STEP_INSERT checks and types the cells."""
    cols = ", ".join(
        f"trim(cells[list_position(header, '{raw}')]) AS {name}" for name, (raw, _) in _STEP_COLUMNS.items()
    )
    return f"""
    WITH t AS (SELECT filename, string_split(replace(content, chr(13), ''), chr(10)) AS lines FROM read_text($paths)),
    r AS (SELECT filename, list_transform(string_split(lines[1], ','), lambda h: trim(h)) AS header,
                 unnest(lines[2:]) AS line, generate_subscripts(lines[2:], 1) + 1 AS line_no FROM t)
    SELECT f.rank, f.path, line_no, NULL::VARCHAR AS db_table, {cols}
    FROM (SELECT filename, header, line_no, string_split(line, ',') AS cells FROM r WHERE trim(line) <> '') c
    JOIN _job_files f ON f.path = c.filename
    ORDER BY f.file_no, line_no
    """


STEP_INSERT = (
    "INSERT INTO job_steps BY NAME SELECT $job AS run_id, rank, "
    + ", ".join(f"CAST({checked(f)} AS {_STEP_COLUMNS[name][1]}) AS {name}" for name, f in STEP_FIELDS.items())
    + " FROM _job_steps_raw WHERE list_contains($paths, path)"
)


def _add_db_rows(con: duckdb.DuckDBPyConnection, target: str, sql: str, tables: set[str], table: str) -> None:
    """The rows ``sql`` makes of the packed analysis.db ``table`` added to the raw table ``target`` (made when
    no text file made it), when a rank's database holds that table."""
    if table not in tables:
        return
    if _exists(con, target):
        con.execute(f"INSERT INTO {target} BY NAME {sql}")
    else:
        con.execute(f"CREATE TEMP TABLE {target} AS {sql}")


@dataclass(frozen=True)
class JobSummaryFiles:
    """One job's summary files: ``kinds`` maps a kind (step_trace_time, communication, communication_matrix) to
    its (path, rank) pairs; ``docs`` holds the analysis.db tables of the ranks without such a file
    (analysis_db_scan.pack_tables)."""

    job_id: str
    kinds: dict[str, list[tuple[Path, int]]]
    docs: pa.Table

    @cached_property
    def paths(self) -> list[str]:
        """Every file the job's summary rows can come from (the raw tables' ``path``)."""
        texts = [str(p) for files in self.kinds.values() for p, _ in files]
        return texts + self.docs.column("path").to_pylist()


@contextmanager
def _db_docs(con: duckdb.DuckDBPyConnection, docs: list[pa.Table]) -> Iterator[set[str]]:
    """Within the block, the analysis.db tables ``docs`` as ``_job_db_docs`` (when they hold any); yields the
    names of the tables they hold."""
    tables = {t for d in docs for t in d.column("tbl").to_pylist()}
    if tables:
        con.register("_job_db_docs", pa.concat_tables(docs))
    try:
        yield tables
    finally:
        if tables:
            con.unregister("_job_db_docs")


def _per_job(problems: list[Problem], jobs: list[JobSummaryFiles]) -> list[list[Problem]]:
    """``problems`` (each of a file) split by the job whose file it is, each job's in their order."""
    owners = {path: i for i, job in enumerate(jobs) for path in job.paths}
    split: list[list[Problem]] = [[] for _ in jobs]
    for problem in problems:
        split[owners[problem.file]].append(problem)
    return split


def _load_steps(con: duckdb.DuckDBPyConnection, jobs: list[JobSummaryFiles], tables: set[str]) -> list[list[Problem]]:
    """job_steps of every job from the step_trace_time.csv files and StepTraceTime tables; each unsound number
    named and left out."""
    files = [f for job in jobs for f in job.kinds.get("step_trace_time", [])]
    problems = scan_files(con, step_sql(), files, "_job_steps_raw")
    _add_db_rows(con, "_job_steps_raw", db.STEPS, tables, "StepTraceTime")
    if _exists(con, "_job_steps_raw"):
        for job in jobs:
            con.execute(STEP_INSERT, {"job": job.job_id, "paths": job.paths})
        place = "coalesce(db_table || ' row ', 'line ') || line_no"
        problems += damaged_values(
            con, "_job_steps_raw", list(STEP_FIELDS.values()), place, "this rank's value of that step"
        )
        con.execute("DROP TABLE _job_steps_raw")
    return _per_job(problems, jobs)


def _load_comm(con: duckdb.DuckDBPyConnection, jobs: list[JobSummaryFiles], tables: set[str]) -> list[list[Problem]]:
    """job_comm_bandwidth and job_comm_ops of every job from the communication.json files and CommAnalyzerTime /
    CommAnalyzerBandwidth tables; each unsound number named."""
    files = [f for job in jobs for f in job.kinds.get("communication", [])]
    problems = scan_files(con, _OPS, files, "_job_comm_raw", {"shape": COMM_SHAPE})
    _add_db_rows(con, "_job_comm_raw", db.COMM, tables, "CommAnalyzerTime")
    if not _exists(con, "_job_comm_raw"):
        return _per_job(problems, jobs)
    con.execute(f"CREATE TEMP TABLE _job_comm_bw_raw AS {_BW_RAW}")
    for job in jobs:  # each job's rows alone, in the order they have read alone (its sums add in that order)
        params = {"job": job.job_id, "paths": job.paths}
        con.execute(f"INSERT INTO job_comm_bandwidth BY NAME {_BANDWIDTH}", params)
        con.execute(f"INSERT INTO job_comm_ops BY NAME {_COMM_OPS}", params)
    place = "'step ' || step_id || ' ' || op_key"
    problems += damaged_values(
        con, "_job_comm_raw", [*OP_FIELDS.values(), _START], place, "this rank's time in that op"
    )
    problems += damaged_values(
        con, "_job_comm_bw_raw", list(BW_FIELDS.values()), f"{place} || ' ' || t.key", "this rank's data in that op"
    )
    con.execute("DROP TABLE _job_comm_raw")
    con.execute("DROP TABLE _job_comm_bw_raw")
    return _per_job(problems, jobs)


def load_job_summaries(con: duckdb.DuckDBPyConnection, jobs: list[JobSummaryFiles]) -> list[list[Problem]]:
    """Fill job_steps, job_comm_bandwidth and job_comm_ops of every job of ``jobs`` (no file of two of them),
    each kind's files of all of them read in one scan; per job (in ``jobs`` order) the problems met. Each job
    gets the rows, in their order, and the problems it gets read alone."""
    with _db_docs(con, [job.docs for job in jobs]) as tables:
        steps = _load_steps(con, jobs, tables)
        comm = _load_comm(con, jobs, tables)
    return [a + b for a, b in zip(steps, comm, strict=True)]


def load_job_matrix(con: duckdb.DuckDBPyConnection, job: JobSummaryFiles) -> list[Problem]:
    """The temp table _job_matrix_raw (rank, path, db_table, step_id, op_kind, op_key, op) of one job, which its
    groups and links read; the problems met."""
    with _db_docs(con, [job.docs]) as tables:
        problems = scan_files(
            con, _OPS, job.kinds.get("communication_matrix", []), "_job_matrix_raw", {"shape": MATRIX_SHAPE}
        )
        _add_db_rows(con, "_job_matrix_raw", db.MATRIX, tables, "CommAnalyzerMatrix")
    return problems


def _exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(con.execute("SELECT 1 FROM duckdb_tables() WHERE table_name = ? AND temporary", [table]).fetchall())
