"""The job's summary rows from the ranks' analysis.db (torch_npu export_type=db), for ranks without the text files.

analysis.db (or communication_analyzer.db) holds the numbers of step_trace_time.csv (``StepTraceTime``, us),
communication.json (``CommAnalyzerTime``, ms; ``CommAnalyzerBandwidth``, a row per op, transport and packet
size) and communication_matrix.json (``CommAnalyzerMatrix``, a row per link). SQLite packs each table of a file
into one JSON text (its json1 functions: no Python object per row), and DuckDB parses the texts of all ranks in
one scan into the rows summary_scan.py reads from the text files, numbers still as their text, so that
value_checks.py checks both forms alike; ``db_table`` says which table a row came from (NULL: a text file).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pyarrow as pa

from analyzer.errors import first_line
from analyzer.ingest.model import Problem
from analyzer.ingest.sqlite.sqlite_analysis import STEP_TRACE_COLUMNS
from analyzer.ingest.sqlite.sqlite_open import UnusableDb, open_readonly, table_names
from analyzer.job.summary_shapes import COMM_OP_TYPE, MATRIX_OP_TYPE

# The summary kinds a db-form rank holds in analysis.db, and the tables that hold each.
DB_TABLES = {
    "step_trace_time": ("StepTraceTime",),
    "communication": ("CommAnalyzerTime", "CommAnalyzerBandwidth"),
    "communication_matrix": ("CommAnalyzerMatrix",),
}
# StepTraceTime's columns by job_steps column (step_trace_time.csv's headers, lower-cased, words joined by '_'),
# as the single-run read maps them.
STEP_COLUMNS = {"step_id": "step", **{col: raw for raw, col in STEP_TRACE_COLUMNS.items()}}
# The columns read of each table (a column a file lacks reads as NULL).
_COLUMNS = {
    "StepTraceTime": tuple(STEP_COLUMNS.values()),
    "CommAnalyzerTime": (
        "hccl_op_name",
        "group_name",
        "start_timestamp",
        "elapse_time",
        "transit_time",
        "wait_time",
        "synchronization_time",
        "idle_time",
        "step",
        "type",
    ),
    "CommAnalyzerBandwidth": (
        "hccl_op_name",
        "group_name",
        "transport_type",
        "transit_size",
        "transit_time",
        "bandwidth",
        "large_packet_ratio",
        "step",
        "type",
    ),
    "CommAnalyzerMatrix": (
        "hccl_op_name",
        "group_name",
        "src_rank",
        "dst_rank",
        "transport_type",
        "transit_size",
        "transit_time",
        "bandwidth",
        "step",
        "type",
        "op_name",
    ),
}
# communication.json's names of the CommAnalyzerTime / CommAnalyzerBandwidth / CommAnalyzerMatrix columns.
TIME_NAMES = {
    "Start Timestamp(us)": "start_timestamp",
    "Elapse Time(ms)": "elapse_time",
    "Transit Time(ms)": "transit_time",
    "Wait Time(ms)": "wait_time",
    "Synchronization Time(ms)": "synchronization_time",
    "Idle Time(ms)": "idle_time",
}
TRANSPORT_NAMES = {
    "Transit Size(MB)": "transit_size",
    "Transit Time(ms)": "transit_time",
    "Bandwidth(GB/s)": "bandwidth",
    "Large Packet Ratio": "large_packet_ratio",
}
LINK_NAMES = {
    "Transport Type": "transport_type",
    "Transit Size(MB)": "transit_size",
    "Transit Time(ms)": "transit_time",
    "Bandwidth(GB/s)": "bandwidth",
    "Op Name": "op_name",
}
# The names value_checks gives the ranks of a matrix link, and their columns.
RANK_NAMES = {"source rank": "src_rank", "destination rank": "dst_rank"}


_DOCS = pa.schema([("path", pa.string()), ("rank", pa.int32()), ("tbl", pa.string()), ("doc", pa.string())])


def _as_text(column: str) -> str:
    """SQLite SQL of a value as text: a real with 17 significant digits, which read back as the same double
    (SQLite's text of a real keeps 15; its 17th digit may be off by one, so _shortest writes it again),
    anything else as SQLite writes it ('Inf' included)."""
    c = f'"{column}"'
    return f"CASE WHEN typeof({c}) = 'real' THEN printf('%!.17g', {c}) ELSE CAST({c} AS TEXT) END"


def _shortest(expr: str) -> str:
    """DuckDB SQL: a real's text (digits with a decimal point) as the shortest text of its double, as a JSON
    file writes it: a start time's text is read to the nanosecond (summary_scan), so both forms must agree."""
    return (
        f"CASE WHEN regexp_full_match({expr}, '-?[0-9]+\\.[0-9]*(e[-+]?[0-9]+)?') "
        f"THEN CAST(CAST({expr} AS DOUBLE) AS VARCHAR) ELSE {expr} END"
    )


def _pack(conn: sqlite3.Connection, table: str) -> str | None:
    """One table's rows as one JSON text, an array of objects (its row id as ``_rowid``); None when absent."""
    present = {r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')}
    if not present:
        return None
    items = "".join(f", '{c}', {_as_text(c)}" for c in _COLUMNS[table] if c in present)
    return conn.execute(f"SELECT json_group_array(json_object('_rowid', rowid{items})) FROM \"{table}\"").fetchone()[0]


def holds_any(paths: tuple[Path, ...], tables: tuple[str, ...]) -> bool:
    """Whether one of the databases ``paths`` holds one of ``tables``; a database that cannot be read holds none
    (reading its rank names it)."""
    for path in paths:
        try:
            with open_readonly(path) as conn:
                present = table_names(conn)
        except (UnusableDb, sqlite3.Error):
            continue
        if present.intersection(tables):
            return True
    return False


def pack_tables(wanted: list[tuple[int, tuple[Path, ...], tuple[str, ...]]]) -> tuple[pa.Table, list[Problem]]:
    """For each (rank, its analysis databases, tables wanted), each table from the first database holding it,
    as rows (path, rank, tbl, doc); a file that cannot be read is a Problem, as a text file would be."""
    rows: dict[str, list] = {"path": [], "rank": [], "tbl": [], "doc": []}
    problems = []
    for rank, paths, tables in wanted:
        left = list(tables)
        for path in paths:
            try:
                with open_readonly(path) as conn:
                    packed = [(t, doc) for t in left if (doc := _pack(conn, t)) is not None]
            except (UnusableDb, sqlite3.Error) as exc:
                problems.append(
                    Problem(
                        str(path),
                        "",
                        "error",
                        f"rank {rank}: cannot read the file: {first_line(exc, 200)}",
                        "re-export this rank",
                    )
                )
                continue
            for table, doc in packed:
                left.remove(table)
                for key, value in (("path", str(path)), ("rank", rank), ("tbl", table), ("doc", doc)):
                    rows[key].append(value)
    return pa.table(rows, _DOCS), problems


def _rows(table: str) -> str:
    """SQL: the rows of ``table`` of every packed file: path, rank and ``r``, a struct of its row id and
    columns as text."""
    shape = json.dumps([{"_rowid": "BIGINT", **dict.fromkeys(_COLUMNS[table], "VARCHAR")}])
    cells = ", ".join(f"'{c}': {_shortest(f'x.{c}')}" for c in _COLUMNS[table])
    return (
        f"SELECT path, rank, {{'_rowid': x._rowid, {cells}}} AS r FROM "
        f"(SELECT path, rank, unnest(json_transform(doc, '{shape}')) AS x FROM _job_db_docs WHERE tbl = '{table}')"
    )


def _step(expr: str) -> str:
    """SQL: the step number's text of 'step50' or '50' (CommAnalyzer* write the first, StepTraceTime the second)."""
    return f"coalesce(nullif(regexp_extract({expr}, '^\\s*step\\s*(\\d+)\\s*$', 1), ''), {expr})"


def _struct(names: dict[str, str], alias: str) -> str:
    return "{" + ", ".join(f"'{name}': {alias}.\"{col}\"" for name, col in names.items()) + "}"


# The rows of step_trace_time.csv's raw table (summary_scan.step_sql); line_no is the row id. The rows of
# each table come in rank order, as the files are read: the job's sums then add their terms in the same order
# whatever the form (fixed_order.py).
_STEP_CELLS = ", ".join(
    f"{_step('r.step') if c == 'step_id' else f'r.{src}'} AS {c}" for c, src in STEP_COLUMNS.items()
)
STEPS = f"""
SELECT rank, path, r._rowid AS line_no, 'StepTraceTime' AS db_table, {_STEP_CELLS}
FROM ({_rows("StepTraceTime")}) ORDER BY rank, path, line_no
"""

# The rows of communication.json's raw table (summary_scan._OPS): one per CommAnalyzerTime row, its bandwidth
# info the CommAnalyzerBandwidth rows of the op (one per transport: the first of its packet-size rows, which
# all repeat the op's transit size, time and bandwidth).
COMM = f"""
WITH t AS ({_rows("CommAnalyzerTime")}),
b AS (
    SELECT path, r.step AS step, r.type AS type, r.hccl_op_name AS op, r.group_name AS grp,
           r.transport_type AS transport,
           arg_min({_struct(TRANSPORT_NAMES, "r")}, r._rowid) AS link, min(r._rowid) AS first
    FROM ({_rows("CommAnalyzerBandwidth")}) WHERE r.transport_type IS NOT NULL GROUP BY ALL
),
info AS (
    SELECT path, step, type, op, grp, map_from_entries(list({{'key': transport, 'value': link}} ORDER BY first)) AS info
    FROM b GROUP BY ALL
)
SELECT t.rank, t.path, 'CommAnalyzerTime' AS db_table, TRY_CAST({_step("t.r.step")} AS BIGINT) AS step_id,
       t.r.type AS op_kind, t.r.hccl_op_name || '@' || coalesce(t.r.group_name, '') AS op_key,
       CAST({{'Communication Time Info': {_struct(TIME_NAMES, "t.r")}, 'Communication Bandwidth Info': info.info}}
            AS {COMM_OP_TYPE}) AS op
FROM t LEFT JOIN info ON info.path = t.path AND info.step IS NOT DISTINCT FROM t.r.step
     AND info.type IS NOT DISTINCT FROM t.r.type AND info.op IS NOT DISTINCT FROM t.r.hccl_op_name
     AND info.grp IS NOT DISTINCT FROM t.r.group_name
WHERE t.r.type IN ('collective', 'p2p') AND t.r.hccl_op_name IS NOT NULL AND t.r.hccl_op_name <> 'Total Op Info'
ORDER BY t.rank, t.path, t.r._rowid
"""

# The rows of communication_matrix.json's raw table: one per (file, step, kind, '<op>-<stat>@<group>'), its
# links keyed 'src-dst' (the first row of a link met twice).
MATRIX = f"""
WITH l AS (
    SELECT rank, path, r.step AS step, r.type AS op_kind, r.hccl_op_name || '@' || coalesce(r.group_name, '') AS op_key,
           coalesce(r.src_rank, '') || '-' || coalesce(r.dst_rank, '') AS link,
           arg_min({_struct(LINK_NAMES, "r")}, r._rowid) AS v,
           min(r._rowid) AS first
    FROM ({_rows("CommAnalyzerMatrix")})
    WHERE r.type IN ('collective', 'p2p') AND r.hccl_op_name IS NOT NULL
    GROUP BY ALL
)
SELECT rank, path, 'CommAnalyzerMatrix' AS db_table, TRY_CAST({_step("step")} AS BIGINT) AS step_id, op_kind, op_key,
       CAST(map_from_entries(list({{'key': link, 'value': v}} ORDER BY first)) AS {MATRIX_OP_TYPE}) AS op
FROM l GROUP BY rank, path, step, op_kind, op_key ORDER BY rank, path, min(first)
"""
