"""What a log folder's report shows beside the findings: the reading summary and the records around the failure."""

from __future__ import annotations

from typing import Any

import duckdb

from analyzer.rule_engine.model import Finding
from analyzer.rule_engine.runner import plain_value

CONTEXT_BEFORE = 8  # records shown before the failure's record, in its file
CONTEXT_AFTER = 12  # and after it

_CONTEXT = """
WITH ranked AS (SELECT *, row_number() OVER (ORDER BY line_no) AS k
                FROM log_events WHERE run_id = $run_id AND file_id = $file_id),
anchor AS (SELECT k FROM ranked WHERE line_no = $line_no)
SELECT CASE WHEN ranked.line_no = $line_no THEN '>>' ELSE '' END AS at, ranked.line_no, ranked.level, ranked.module,
       strftime(ranked.wall_time, '%Y-%m-%d %H:%M:%S.%f') AS wall_time, coalesce(ranked.error_code, '') AS code,
       left(ranked.message, 400) AS message
FROM ranked, anchor WHERE ranked.k BETWEEN anchor.k - $before AND anchor.k + $after
ORDER BY ranked.line_no, ranked.k
"""

_SUMMARY = """
SELECT (SELECT count(*) FROM log_files WHERE run_id = $r) AS files,
       (SELECT count(*) FROM log_files WHERE run_id = $r AND skipped IS NOT NULL) AS files_skipped,
       (SELECT coalesce(sum(line_count), 0) FROM log_files WHERE run_id = $r) AS lines,
       (SELECT coalesce(sum(record_count), 0) FROM log_files WHERE run_id = $r) AS records,
       (SELECT coalesce(sum(unparsed_line_count), 0) FROM log_files WHERE run_id = $r) AS unparsed_lines,
       (SELECT count(*) FROM log_events WHERE run_id = $r AND level IN ('ERROR', 'CRITICAL')) AS error_records,
       (SELECT count(*) FROM log_events WHERE run_id = $r AND level = 'WARNING') AS warning_records,
       (SELECT string_agg(layout || ' ' || n, ', ' ORDER BY layout)
        FROM (SELECT layout, count(*) AS n FROM log_files WHERE run_id = $r GROUP BY layout)) AS layouts,
       (SELECT count(DISTINCT session_no) FROM log_processes WHERE run_id = $r) AS sessions,
       (SELECT strftime(coalesce(min(first_time) FILTER (WHERE host_process), min(first_time)), '%Y-%m-%d %H:%M:%S')
        FROM log_processes WHERE run_id = $r AND in_run) AS run_start,
       (SELECT strftime(max(last_time), '%Y-%m-%d %H:%M:%S') FROM log_processes
        WHERE run_id = $r AND in_run) AS run_end,
       (SELECT count(DISTINCT rank_id) FROM log_processes WHERE run_id = $r AND in_run) AS ranks
"""


def log_summary(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, Any]:
    """Counts of what was read (files, records, unparsed lines, errors), the layouts and the run's span."""
    cursor = con.execute(_SUMMARY, {"r": run_id})
    names = [d[0] for d in cursor.description]
    return {n: plain_value(v) for n, v in zip(names, cursor.fetchall()[0], strict=True)}


def failure_context(
    con: duckdb.DuckDBPyConnection, run_id: str, findings: list[Finding]
) -> tuple[tuple[str, ...], tuple[tuple[Any, ...], ...]]:
    """The records around the record of the first finding that names one (file_id, line_no), in its file."""
    anchor = next((f for f in findings if "file_id" in f.details and "line_no" in f.details), None)
    if anchor is None:
        return (), ()
    params = {"run_id": run_id, "file_id": anchor.details["file_id"], "line_no": anchor.details["line_no"]}
    cursor = con.execute(_CONTEXT, {**params, "before": CONTEXT_BEFORE, "after": CONTEXT_AFTER})
    columns = tuple(d[0] for d in cursor.description)
    return columns, tuple(tuple(plain_value(v) for v in row) for row in cursor.fetchall())
