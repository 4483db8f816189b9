"""Documented helper views that rules may query (leading underscore, Perfetto style), created before rules run.

Every view is derived from the normalized tables only and is empty (never an error) when its
inputs are empty. They are TEMP views and tables, never written into a saved database file.
Intervals are half-open ``[start_ns, end_ns)`` in exact int64 nanoseconds (beware: DuckDB's
least/greatest ignore NULLs, so overlap sums over LEFT JOINs filter the unmatched rows);
durations are DOUBLE microseconds. "Device" means the pair (run_id, device_id): runs are split
per device at ingest, so in practice one run is one device.
"""

# ruff: noqa: E501  (the SQL of the views below reads better unwrapped)

from __future__ import annotations

import ast
from typing import Any

import duckdb

from analyzer.rule_engine.breakdown_views import BREAKDOWN_VIEWS
from analyzer.rule_engine.chip_table import run_nominal_sql

COMPUTE_TASK_TYPES = ("AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV", "AI_CPU")
COMMUNICATION_TASK_TYPES = ("HCCL", "COMMUNICATION")


def _parts(rows: str, key: str) -> str:
    """CTEs ``k`` (each distinct ``key`` of the CTE ``rows`` numbered ``part``) and ``n`` (the rows with
    ``part`` in place of the key). Windows then sort and partition integers only: a window keeps its
    whole partition in memory, and the key strings (run ids) would be most of it."""
    cols = [c.strip() for c in key.split(",")]
    on = " AND ".join(f"r.{c} IS NOT DISTINCT FROM k.{c}" for c in cols)
    return (
        f"k AS (SELECT *, row_number() OVER (ORDER BY {key}) AS part FROM (SELECT DISTINCT {key} FROM {rows})),\n"
        f"n AS (SELECT k.part, r.* EXCLUDE ({key}) FROM {rows} r JOIN k ON {on})"
    )


# The rows of a task table that are intervals: a start and an end, the end not before the start.
_VALID_INTERVAL = "start_ns IS NOT NULL AND end_ns IS NOT NULL AND end_ns >= start_ns"


def _intervals(source: str, key: str) -> str:
    """CTEs ``t`` (the rows of ``source`` with a start and an end, end not before start), ``k`` and
    ``n`` (see ``_parts``): the intervals that the merging helpers read."""
    return f"""WITH t AS (SELECT {key}, start_ns, end_ns FROM {source}
           WHERE {_VALID_INTERVAL}),
{_parts("t", key)}"""


def _merged(source: str, key: str = "run_id, device_id") -> str:
    """SQL merging the [start_ns, end_ns) intervals of ``source`` per ``key`` columns into disjoint ones.

    Gaps-and-islands in one sort: a row opens a new island when it starts after the latest end of
    the rows before it (``prev_end``, a running max over the frame ending 1 PRECEDING). An island
    ends at the ``prev_end`` of the next island's first row (the latest end before it), the last one
    at its partition's latest end; its task count is the distance between the first rows' numbers.
    No GROUP BY over the tasks, and the second window sorts only the islands' first rows, by integer.
    """
    order = "PARTITION BY part ORDER BY start_ns, end_ns"
    return f"""
{_intervals(source, key)},
r AS (SELECT part, start_ns, max(end_ns) OVER w AS prev_end, row_number() OVER w AS rn
      FROM n WINDOW w AS ({order} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)),
tot AS (SELECT part, max(end_ns) AS last_end, count(*) AS task_rows FROM n GROUP BY part),
i AS (SELECT part, start_ns, rn, row_number() OVER f AS interval_no,
             lead(prev_end) OVER f AS next_prev_end, lead(rn) OVER f AS next_rn
      FROM r WHERE prev_end IS NULL OR start_ns > prev_end WINDOW f AS (PARTITION BY part ORDER BY rn)),
e AS (SELECT i.part, i.interval_no, i.start_ns, coalesce(i.next_prev_end, tot.last_end) AS end_ns,
             coalesce(i.next_rn, tot.task_rows + 1) - i.rn AS task_count
      FROM i JOIN tot USING (part))
SELECT {", ".join(f"k.{c.strip()}" for c in key.split(","))}, e.interval_no, e.start_ns, e.end_ns,
       (e.end_ns - e.start_ns) / 1000.0 AS dur_us, e.task_count
FROM e JOIN k USING (part)"""


def _union_length(source: str, key: str) -> str:
    """SQL of the length of the union of the [start_ns, end_ns) intervals of ``source`` per ``key``
    columns (``busy_us``), and their count (``task_count``), without building the merged intervals:
    each row adds what it reaches past the latest end of the rows sorted before it. One sort."""
    cols = [c.strip() for c in key.split(",")]
    return f"""
{_intervals(source, key)},
r AS (SELECT part, start_ns, end_ns, max(end_ns) OVER (PARTITION BY part ORDER BY start_ns, end_ns
          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
      FROM n),
u AS (SELECT part, sum(greatest(0, end_ns - greatest(start_ns, coalesce(prev_end, start_ns)))) AS busy_ns,
             sum(1) AS task_count
      FROM r GROUP BY part)
SELECT {", ".join(f"k.{c}" for c in cols)}, u.busy_ns / 1000.0 AS busy_us, u.task_count
FROM u JOIN k USING (part)"""


def _gaps(rows: str, key: str) -> str:
    """CTEs ``k`` (see ``_parts``) and ``g``: where a row of ``rows`` (rid, key, start_ns, end_ns) starts
    after every row that starts before it (per ``key``) has ended: part (join ``k`` for the key), start_ns
    (the latest end before), end_ns (the row's start), prev_rid (the row that ended last), rid. Ties are
    broken by rid (the ops row's number in storage), so results repeat."""
    return f"""{_parts(rows, key)},
p AS (SELECT *, max(end_ns) OVER w AS prev_end, arg_max(rid, end_ns) OVER w AS prev_rid FROM n
      WINDOW w AS (PARTITION BY part ORDER BY start_ns, end_ns, rid ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)),
g AS (SELECT part, prev_end AS start_ns, start_ns AS end_ns, prev_rid, rid FROM p WHERE start_ns > prev_end)"""


def _device_gaps_sql(with_steps: bool) -> str:
    """``_device_gaps``; ``with_steps=False`` is the same relation for a database whose steps table
    has no window (the step of a gap is then its next task's): it skips the ASOF join, which sorts
    every gap even against no step."""
    step = "coalesce(gs.step_in, a.step_id)" if with_steps else "a.step_id"
    windows = (
        """,
ks AS (SELECT k.part, s.start_ns, max(s.end_ns) AS end_ns, arg_max(s.step_id, (s.end_ns, -s.step_id)) AS step_id
       FROM steps s JOIN k ON k.run_id = s.run_id WHERE s.start_ns IS NOT NULL GROUP BY k.part, s.start_ns),
gs AS (SELECT g.*, CASE WHEN g.start_ns < ks.end_ns THEN ks.step_id END AS step_in
       FROM g ASOF LEFT JOIN ks ON ks.part = g.part AND g.start_ns >= ks.start_ns)"""
        if with_steps
        else """,
gs AS (SELECT * FROM g)"""
    )
    return (
        f"""
WITH t AS ({_ops_with_rid("o.device_id, o.start_ns, o.end_ns", _VALID_INTERVAL)}),
"""
        + _gaps("t", "run_id, device_id")
        + windows
        + f"""
SELECT k.run_id, k.device_id, {step} AS step_id, gs.start_ns, gs.end_ns,
       (gs.end_ns - gs.start_ns) / 1000.0 AS gap_us, b.op_name AS op_before, a.op_name AS op_after,
       a.stream_id AS stream_after
FROM gs JOIN k USING (part) JOIN ops a ON a.rowid = gs.rid JOIN ops b ON b.rowid = gs.prev_rid"""
    )


def _ops_with_rid(columns: str, where: str) -> str:
    """SQL of ops rows with ``rid`` (the row's number in storage), ``run_id`` and ``columns``, where
    ``where`` holds."""
    return f"SELECT o.rowid AS rid, o.run_id, {columns} FROM ops o WHERE {where}"


def _in_list(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{v}'" for v in values)


_GAP_CAUSE_CASE = """CASE
    WHEN e.kind IN ('host_api', 'framework_op') AND (e.name ILIKE '%SynchronizeStream%'
         OR e.name ILIKE '%SynchronizeDevice%' OR e.name ILIKE '%SynchronizeEvent%'
         OR e.name ILIKE '%Memcpy%' OR e.name ILIKE '%.cpu%' OR e.name ILIKE '%aten::item%'
         OR e.name ILIKE '%_local_scalar_dense%') THEN 'host_sync'
    WHEN e.kind IN ('host_api', 'framework_op') AND (e.name ILIKE '%compile%' OR e.name ILIKE '%BuildOp%')
         THEN 'compile'
    WHEN e.kind IN ('host_api', 'framework_op') AND (e.name ILIKE '%malloc%' OR e.name ILIKE '%MemAlloc%')
         THEN 'memory_alloc'
    WHEN e.kind = 'device_task' AND (coalesce(e.task_type, e.name) ILIKE '%EVENT_WAIT%'
         OR coalesce(e.task_type, e.name) ILIKE '%Notify Wait%') THEN 'stream_wait'
    END"""

# name -> (documentation, SQL). Order matters: later views use earlier ones.
VIEWS: dict[str, tuple[str, str]] = {
    "_run_nominal": (
        "Per run, the nominal values of its chip (analyzer/rule_engine/chip_table.py, --set chip.KEY=VALUE "
        "overrides): run_id, chip (the table's row used), chip_assumed (the run names no chip, or another "
        "name), ai_core_count, aicore_mhz, hbm_gb_per_s, hccs_gb_per_s, roce_gb_per_s, launch_us, gap_threshold_us.",
        run_nominal_sql(),
    ),
    "_compute_tasks": (
        "ops rows of compute task types (AI_CORE, AI_VECTOR_CORE, MIX_AIC, MIX_AIV, AI_CPU), and ops "
        "whose task type is unknown (NULL, e.g. torch_npu Level0 writes 'N/A'): those are kernels too.",
        f"SELECT * FROM ops WHERE task_type IN ({_in_list(COMPUTE_TASK_TYPES)}) OR task_type IS NULL",
    ),
    "_comm_tasks": (
        "ops rows of communication tasks (task_type HCCL or COMMUNICATION).",
        f"SELECT * FROM ops WHERE task_type IN ({_in_list(COMMUNICATION_TASK_TYPES)})",
    ),
    "_busy_intervals": (
        "Disjoint intervals when at least one compute task ran, per run and device "
        "(run_id, device_id, interval_no, start_ns, end_ns, dur_us, task_count).",
        _merged("_compute_tasks"),
    ),
    "_op_type_busy": (
        "Device time during which at least one compute task of an operator type ran (the union of that "
        "type's intervals, so tasks overlapping on several streams count once): run_id, device_id, "
        "op_type, busy_us, task_count.",
        _union_length("_compute_tasks", "run_id, device_id, op_type"),
    ),
    "_comm_intervals": (
        "Disjoint intervals when at least one communication task ran, per run and device.",
        _merged("_comm_tasks"),
    ),
    "_active_intervals": (
        "Disjoint intervals when any device task (compute, communication or other) ran, per run and device.",
        _merged("ops"),
    ),
    "_run_span": (
        "The analysed span of each run: the steps' window when the run has steps, else first task "
        "start .. last task end (run_id, start_ns, end_ns, span_us, span_source 'steps' | 'ops').",
        """
SELECT run_id, min(start_ns) AS start_ns, max(end_ns) AS end_ns,
       (max(end_ns) - min(start_ns)) / 1000.0 AS span_us, 'steps' AS span_source
FROM steps WHERE start_ns IS NOT NULL AND end_ns IS NOT NULL GROUP BY run_id
UNION ALL
SELECT run_id, min(start_ns), max(end_ns), (max(end_ns) - min(start_ns)) / 1000.0, 'ops'
FROM ops WHERE run_id NOT IN (SELECT run_id FROM steps WHERE start_ns IS NOT NULL AND end_ns IS NOT NULL)
  AND start_ns IS NOT NULL GROUP BY run_id""",
    ),
    "_device_gaps": (
        "Idle stretches of the device between consecutive active intervals (no task of any type ran): "
        "run_id, device_id, step_id (step holding the gap start), start_ns, end_ns, gap_us, "
        "op_before (last task to end before the gap), op_after (first task after it), stream_after (its stream). The step is the "
        "latest steps window starting at or before the gap start (of windows starting together, the one ending "
        "last, then the lowest step id) when the gap starts inside it, else the "
        "step of the task after the gap. A gap opens where a task starts after every earlier-starting task "
        "has ended (one sort of ops; no interval join).",
        _device_gaps_sql(with_steps=True),
    ),
    "_stream_gaps": (
        "Gaps between consecutive tasks of one stream: run_id, device_id, stream_id, step_id (of the "
        "task after the gap), start_ns, end_ns, gap_us, op_before, op_after.",
        f"""
WITH t AS ({_ops_with_rid("o.device_id, o.stream_id, o.start_ns, o.end_ns", "o.stream_id IS NOT NULL AND o.start_ns IS NOT NULL")}),
"""
        + _gaps("t", "run_id, device_id, stream_id")
        + """
SELECT k.run_id, k.device_id, k.stream_id, a.step_id, g.start_ns, g.end_ns,
       (g.end_ns - g.start_ns) / 1000.0 AS gap_us, b.op_name AS op_before, a.op_name AS op_after
FROM g JOIN k USING (part) JOIN ops a ON a.rowid = g.rid JOIN ops b ON b.rowid = g.prev_rid""",
    ),
    "_gap_causes": (
        "Timeline events overlapping a device gap, classified: cause 'host_sync' (stream/device "
        "synchronize, memcpy, .cpu()/item()), 'compile' (op compile), 'memory_alloc' (malloc), "
        "'stream_wait' (device EVENT_WAIT / Notify Wait). Columns: run_id, device_id, gap_start_ns, "
        "cause, event_name, overlap_us (event time inside the gap).",
        f"""
SELECT g.run_id, g.device_id, g.start_ns AS gap_start_ns, {_GAP_CAUSE_CASE} AS cause, e.name AS event_name,
       (least(e.end_ns, g.end_ns) - greatest(e.start_ns, g.start_ns)) / 1000.0 AS overlap_us
FROM _device_gaps g JOIN timeline e ON e.run_id = g.run_id
     AND (e.device_id IS NULL OR g.device_id IS NULL OR e.device_id = g.device_id)
     AND e.start_ns < g.end_ns AND e.end_ns > g.start_ns
WHERE e.kind IN ('host_api', 'framework_op', 'device_task') AND {_GAP_CAUSE_CASE} IS NOT NULL""",
    ),
    "_gap_cause_top": (
        "Per device gap, the cause whose events overlap it longest (run_id, device_id, gap_start_ns, "
        "cause, event_name, overlap_us); gaps with no classified event are absent.",
        """
SELECT run_id, device_id, gap_start_ns, arg_max(cause, overlap_us) AS cause,
       arg_max(event_name, overlap_us) AS event_name, max(overlap_us) AS overlap_us
FROM _gap_causes GROUP BY run_id, device_id, gap_start_ns""",
    ),
    "_classified_gaps": (
        "Every device gap with its main cause: _device_gaps columns plus cause ('host_sync', 'compile', "
        "'memory_alloc', 'stream_wait', or 'unattributed' when the timeline shows nothing inside it) and "
        "cause_event (the event behind the cause).",
        """
SELECT g.*, coalesce(c.cause, 'unattributed') AS cause, c.event_name AS cause_event
FROM _device_gaps g LEFT JOIN _gap_cause_top c ON c.run_id = g.run_id AND c.gap_start_ns = g.start_ns
     AND c.device_id IS NOT DISTINCT FROM g.device_id""",
    ),
    "_comm_exposed": (
        "Communication tasks per run and device, and how much of their time no compute task hid: "
        "run_id, device_id, comm_us (union of communication intervals), overlapped_us (of it, time a compute "
        "task also ran), comm_not_overlapped_us.",
        """
WITH c AS (SELECT run_id, device_id, sum(end_ns - start_ns) / 1000.0 AS comm_us FROM _comm_intervals
           GROUP BY run_id, device_id),
o AS (SELECT c.run_id, c.device_id,
             sum(least(c.end_ns, b.end_ns) - greatest(c.start_ns, b.start_ns)) / 1000.0 AS overlapped_us
      FROM _comm_intervals c JOIN _busy_intervals b ON b.run_id = c.run_id
           AND b.device_id IS NOT DISTINCT FROM c.device_id AND b.start_ns < c.end_ns AND b.end_ns > c.start_ns
      GROUP BY c.run_id, c.device_id)
SELECT c.run_id, c.device_id, c.comm_us, coalesce(o.overlapped_us, 0) AS overlapped_us,
       c.comm_us - coalesce(o.overlapped_us, 0) AS comm_not_overlapped_us
FROM c LEFT JOIN o ON o.run_id = c.run_id AND o.device_id IS NOT DISTINCT FROM c.device_id""",
    ),
    "_host_api_calls": (
        "Host API events of the timeline per run (run_id, calls, host_us): how many launches and runtime calls "
        "the host made, when the timeline has them.",
        "SELECT run_id, count(*) AS calls, sum(end_ns - start_ns) / 1000.0 AS host_us FROM timeline "
        "WHERE kind = 'host_api' AND start_ns IS NOT NULL AND end_ns IS NOT NULL GROUP BY run_id",
    ),
    **BREAKDOWN_VIEWS,
    "_run_busy": (
        "THE busy time of each run, read by the catalog (run_metrics), the sweep and the run summary: the "
        "time breakdown's computing part over all its windows together (_time_breakdown window 0), i.e. the "
        "time some compute task ran (_busy_intervals) inside the steps' windows, or the profiled span without "
        "steps, or the export's own computing time where it decomposes its steps. Columns: run_id, span_us "
        "(the analysed span), busy_us, busy_ratio (busy_us / span_us).",
        """
SELECT run_id, span_us, computing_us AS busy_us, computing_us / nullif(span_us, 0) AS busy_ratio
FROM _time_breakdown WHERE window_no = 0""",
    ),
}


# Cheap filters of ops, and helpers that no built-in rule or chart reads (computed only when a rule of
# the user's reads them), stay views; so does _stream_gaps, read once by inter-op-gap with a threshold
# on gap_us that DuckDB applies before the op-name joins (as a table, every gap of every stream had its
# names joined). Every other helper view is computed once and kept as a
# table, because rules read them many times (a view would recompute its window passes each time).
_PLAIN_VIEWS = ("_compute_tasks", "_comm_tasks", "_stream_gaps")
# What the helper views are derived from; when it has not changed since the last call, they are kept.
# Timeline rows (millions, only appended by ingest) are summed, not hashed: hashing their names would
# cost more than the views it saves on a big export.
_SIGNATURE_SQL = """
SELECT (SELECT count(*) || ':' || coalesce(sum(hash(run_id, device_id, stream_id, step_id, task_type, op_type,
                                                    op_name, start_ns, end_ns)), 0) FROM ops)
    || '/' || (SELECT count(*) || ':' || coalesce(sum(hash(s)), 0) FROM steps s)
    || '/' || (SELECT count(*) || ':' || coalesce(sum(start_ns), 0) || ':' || coalesce(sum(end_ns), 0)
               FROM timeline)"""


# name -> SQL of every helper relation, in VIEWS order.
_RELATIONS = {name: sql for name, (_doc, sql) in VIEWS.items()}
_HAS_STEP_WINDOWS = "SELECT EXISTS (SELECT 1 FROM steps WHERE start_ns IS NOT NULL)"


def create_views(con: duckdb.DuckDBPyConnection, chip: dict[str, Any] | None = None) -> None:
    """Create every helper relation, visible to ``con`` under its name (nothing is written into a database file).

    ``_PLAIN_VIEWS`` stay views; the others are computed once into TEMP tables, in dependency order,
    and recomputed on a later call only when ops, steps or timeline changed, or when ``chip`` (overrides
    of the chip table, ``--set chip.KEY=VALUE``, checked by chip_table.check_chip_overrides) is given
    and differs from the last call's; without ``chip``, the last call's overrides are kept.
    """
    data = con.execute(_SIGNATURE_SQL).fetchall()[0][0]
    state = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = '_helper_views_state'"
    ).fetchall()[0][0]
    last = con.execute("SELECT signature, chip FROM _helper_views_state").fetchall()[0] if state else None
    chip_text = repr(sorted(chip.items())) if chip is not None else (last[1] if last else repr([]))
    if last and last == (data, chip_text):
        return
    relations = dict(_RELATIONS)
    relations["_run_nominal"] = run_nominal_sql(dict(ast.literal_eval(chip_text)))
    if not con.execute(_HAS_STEP_WINDOWS).fetchall()[0][0]:
        relations["_device_gaps"] = _device_gaps_sql(with_steps=False)
    for name, sql in relations.items():
        kind = "VIEW" if name in _PLAIN_VIEWS else "TABLE"
        con.execute(f"CREATE OR REPLACE TEMP {kind} {name} AS {sql}")
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _helper_views_state AS SELECT ?::VARCHAR AS signature, ?::VARCHAR AS chip",
        [data, chip_text],
    )


def view_docs() -> dict[str, str]:
    """View name -> its documentation, for the rules reference."""
    return {name: doc for name, (doc, _sql) in VIEWS.items()}
