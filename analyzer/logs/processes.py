"""log_processes: each process's span in each file, its rank, and which session (the run, or earlier) it belongs to."""

from __future__ import annotations

import duckdb

# The HCCL records that name the process's rank at communicator init (several CANN generations' words).
HCCL_INIT = r"Entry-HcclCommInit|SetupAgent rankNum\[|hcom init\w*.*success|hcclCommInitInfo"
# Spans further apart than this start a new session: the last session is the run the logs are about.
SESSION_GAP_S = 1800
# A host process span of fewer records does not open a session of its own (a stray line pasted into a
# file, a process that only started): it joins the session running at its time, like the device logs.
MIN_SESSION_RECORDS = 5
# A clock before this is not synchronised yet (firmware logs 1970 until the host sets its time).
_SYNCED = "TIMESTAMP '2000-01-01'"

# Host process logs are spanned per process; logs that live for days (firmware, device OS, install,
# driver) per hour of records, so that one such file does not join a week of sessions into one.
_PROCESSES = f"""
INSERT INTO log_processes BY NAME
WITH inits AS (  -- the HCCL init records naming a process's rank, on its node (pids repeat across machines)
    SELECT f.node_id, e.pid, f.name_pid, e.wall_time,
           TRY_CAST(regexp_extract(e.message, '\\brank\\[(\\d+)\\]', 1) AS INTEGER) AS rank_id,
           coalesce(TRY_CAST(regexp_extract(e.message, '(?:rankNum|ranks|totalRanks)\\[(\\d+)\\]', 1) AS INTEGER), 0)
               AS width
    FROM log_events e JOIN log_files f ON f.run_id = e.run_id AND f.file_id = e.file_id
    WHERE e.run_id = $run_id AND e.module = 'HCCL' AND f.layout IN ('plog', 'device') AND e.message LIKE '%rank[%'
      AND regexp_matches(e.message, $hccl_init) AND regexp_matches(e.message, '\\brank\\[\\d+\\]')),
by_pid AS (  -- a process in several communicators: its rank in the widest (the world group)
    SELECT node_id, pid, arg_max(rank_id, (width, -epoch_us(wall_time))) AS rank_id FROM inits GROUP BY ALL),
by_name AS (
    SELECT node_id, name_pid, arg_max(rank_id, (width, -epoch_us(wall_time))) AS rank_id
    FROM inits WHERE name_pid IS NOT NULL GROUP BY ALL),
ev AS (
    SELECT e.file_id, e.pid, e.wall_time, e.level,
           coalesce(e.rank_id, bp.rank_id, bn.rank_id,
                    CASE WHEN NOT EXISTS (SELECT 1 FROM inits) THEN f.node_id END) AS rank_id,
           f.layout IN ('plog', 'device', 'other') AND e.pid > 0 AS host_process,
           CASE WHEN f.layout IN ('plog', 'device', 'other') AND e.pid > 0 THEN NULL
                ELSE date_trunc('hour', e.wall_time) END AS bucket
    FROM log_events e JOIN log_files f ON f.run_id = e.run_id AND f.file_id = e.file_id
    LEFT JOIN by_pid bp ON bp.node_id IS NOT DISTINCT FROM f.node_id AND bp.pid = e.pid
                       AND f.layout IN ('plog', 'device')
    LEFT JOIN by_name bn ON bn.node_id IS NOT DISTINCT FROM f.node_id AND bn.name_pid = f.name_pid
                        AND f.layout IN ('plog', 'device')
    WHERE e.run_id = $run_id),
spans AS (
    SELECT file_id, pid, bucket, bool_or(host_process) AS host_process, any_value(rank_id) AS rank_id,
           min(wall_time) FILTER (WHERE wall_time >= {_SYNCED}) AS first_time,
           max(wall_time) FILTER (WHERE wall_time >= {_SYNCED}) AS last_time,
           count(*) AS record_count, count(*) FILTER (WHERE level IN ('ERROR', 'CRITICAL')) AS error_count
    FROM ev GROUP BY file_id, pid, bucket),
graded AS (  -- 1: a host process of min_records or more, 2: another host process, 3: any other span
    SELECT *, CASE WHEN host_process AND record_count >= $min_records THEN 1 WHEN host_process THEN 2 ELSE 3 END
              AS grade
    FROM spans WHERE first_time IS NOT NULL),
leaders AS (  -- the spans that make sessions: those of the best grade there is
    SELECT * EXCLUDE (grade) FROM graded WHERE grade = (SELECT min(grade) FROM graded)),
ordered AS (
    SELECT *, max(last_time) OVER (ORDER BY first_time, file_id, pid, bucket
                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
    FROM leaders),
starts AS (
    SELECT first_time AS session_start,
           sum(CASE WHEN reach IS NULL OR first_time > reach + to_seconds($gap_s) THEN 1 ELSE 0 END)
               OVER (ORDER BY first_time, file_id, pid, bucket) AS session_no
    FROM ordered),
sessions AS (SELECT session_no, min(session_start) AS session_start FROM starts GROUP BY session_no),
placed AS (  -- every span in the session that began last at or before its last record
    SELECT s.*, x.session_no
    FROM spans s ASOF LEFT JOIN sessions x ON s.last_time >= x.session_start)
SELECT $run_id AS run_id, file_id, pid, rank_id, host_process, first_time, last_time, record_count, error_count,
       session_no::INTEGER AS session_no,
       coalesce(session_no = (SELECT max(session_no) FROM sessions), first_time IS NULL) AS in_run
FROM placed
"""

_RANKS_FROM_HCCL = """
UPDATE log_events e SET rank_id = p.rank_id
FROM (SELECT DISTINCT file_id, pid, rank_id FROM log_processes WHERE run_id = $run_id AND rank_id IS NOT NULL) p
WHERE e.run_id = $run_id AND e.rank_id IS NULL AND e.file_id = p.file_id AND e.pid = p.pid
"""


def build_processes(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Fill log_processes for the run; records of a process whose HCCL init names its rank get that rank."""
    con.execute(
        _PROCESSES,
        {"run_id": run_id, "hccl_init": HCCL_INIT, "gap_s": SESSION_GAP_S, "min_records": MIN_SESSION_RECORDS},
    )
    hccl_ranked = con.execute(
        "SELECT count(*) FROM log_processes p JOIN log_files f USING (run_id, file_id) "
        "WHERE p.run_id = ? AND p.rank_id IS NOT NULL AND f.rank_id IS NULL",
        [run_id],
    ).fetchall()[0][0]
    if hccl_ranked:
        con.execute(_RANKS_FROM_HCCL, {"run_id": run_id})
