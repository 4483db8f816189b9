"""Log records on the profile's timeline: what the host did (log_events.host_activity) as timeline rows of kind 'log'.

The time breakdown's gap causes (rule_engine/views/gaps.sql, _gap_causes) read them like the timeline's
own host events: a device gap with such a record inside gets its activity as its cause.
"""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb

from analyzer.ingest.sql_values import in_list

MAX_ACTIVITY_S = 10  # an activity lasts until its process's next record in the file, at most this long

# The log's host activities with a synchronised clock (firmware records before time sync show 1970).
_ACTIVITIES = "run_id = $log_run AND host_activity IS NOT NULL AND wall_time >= TIMESTAMP '2000-01-01'"

_MARKS = f"""
INSERT INTO timeline BY NAME
WITH a AS (SELECT * FROM log_events WHERE {_ACTIVITIES}),
nxt AS (SELECT a.*, n.wall_time AS next_time
        FROM a ASOF LEFT JOIN log_events n
          ON n.run_id = a.run_id AND n.file_id = a.file_id AND n.pid = a.pid
          AND n.line_no > a.line_no),
placed AS (SELECT *, (epoch_us(wall_time) - $offset_min::BIGINT * 60000000) * 1000 AS start_ns,
                  (epoch_us(least(greatest(coalesce(next_time, wall_time), wall_time),
                                  wall_time + to_seconds($max_s))) - $offset_min::BIGINT * 60000000) * 1000 AS end_ns
           FROM nxt)
SELECT r.run_id, p.device_id, 'log' AS kind, 'CANN log' AS process, p.pid AS thread_id,
       coalesce(p.process, 'log') || ' ' || coalesce(CAST(p.pid AS VARCHAR), '') AS thread_name,
       p.module || ': ' || left(split_part(p.message, chr(10), 1), 160) AS name, p.host_activity AS category,
       p.start_ns, (p.end_ns - p.start_ns) / 1000.0 AS dur_us, p.end_ns
FROM placed p JOIN runs r ON {in_list("r.run_id", "$runs")}
     AND (r.rank_id IS NULL OR p.rank_id IS NULL OR r.rank_id = p.rank_id)
     AND p.end_ns >= r.start_ns AND p.start_ns <= r.end_ns
"""


_SPANS = f"""
WITH logged AS (SELECT min(epoch_us(wall_time)) AS first_us, max(epoch_us(wall_time)) AS last_us
                FROM log_events WHERE {_ACTIVITIES}),
profiled AS (SELECT min(start_ns) // 1000 AS first_us, max(end_ns) // 1000 AS last_us
             FROM runs WHERE {in_list("run_id", "$runs")})
SELECT l.first_us - $offset_min::BIGINT * 60000000, l.last_us - $offset_min::BIGINT * 60000000, p.first_us, p.last_us
FROM logged l, profiled p
"""


def unplaced_note(con: duckdb.DuckDBPyConnection, log_run_id: str, run_ids: list[str], offset_min: int) -> str | None:
    """Why no host activity of the log was placed, when its time lies outside every run's: both spans in UTC
    (a wrong folder or a wrong --log-utc-offset); None when the log has no host activity or the spans meet."""
    params = {"log_run": log_run_id, "runs": list(run_ids), "offset_min": offset_min}
    log_first, log_last, first, last = con.execute(_SPANS, params).fetchall()[0]
    if None in (log_first, log_last, first, last) or (log_last >= first and log_first <= last):
        return None
    return (
        f"none falls inside the export's time: the logs' host activities run {_utc(log_first)} to "
        f"{_utc(log_last)}, the export {_utc(first)} to {_utc(last)} (UTC)"
    )


def _utc(epoch_us: int) -> str:
    return datetime.fromtimestamp(epoch_us / 1e6, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def place_log_marks(con: duckdb.DuckDBPyConnection, log_run_id: str, run_ids: list[str], offset_min: int) -> int:
    """Add the log's host activities inside each profile run's span (and of its rank, when both know it)
    to that run's timeline; returns how many rows were added."""
    before = con.execute("SELECT count(*) FROM timeline WHERE kind = 'log'").fetchall()[0][0]
    params = {"log_run": log_run_id, "runs": list(run_ids), "offset_min": offset_min, "max_s": MAX_ACTIVITY_S}
    con.execute(_MARKS, params)
    return con.execute("SELECT count(*) FROM timeline WHERE kind = 'log'").fetchall()[0][0] - before
