"""The time breakdown: every microsecond of each step (or of the span) in exactly one named part.

One definition read by the rules, the run summary, the JSON and the step chart. The words mean one
thing each: *computing* (some compute task runs), *communication not overlapped* (only communication
runs), *other device tasks* (only tasks that neither compute nor communicate), *gaps* (the device
idle between two tasks while the timeline shows a cause inside: a host synchronize, a compile, an
allocation, a wait on another stream; or for at least the chip table's gap_threshold_us with no cause
shown), *launch gaps* (idle between two tasks for less than that, no cause shown: the host issues
operators more slowly than the device runs them) and
*free* (idle before the first task or after the last one of the window). Nothing else is "free".

A window is a step (its timestamps) or, without steps, the profiled span. Where the export decomposes
a step itself (steps.computing_us and stage_us: torch_npu's step_trace_time), computing and
communication not overlapped are the export's, and the rest of the stage (the idle time) is split over
the idle parts in the proportions the device timeline shows in the step window (or in the span when
the step has no timestamps).
"""

# ruff: noqa: E501  (the SQL reads better unwrapped)

from __future__ import annotations

# (part, label), in the order every breakdown lists them.
PARTS: tuple[tuple[str, str], ...] = (
    ("computing", "computing"),
    ("comm_not_overlapped", "communication not overlapped"),
    ("other_tasks", "other device tasks"),
    ("gap_host_sync", "gaps: host synchronize / copy"),
    ("gap_compile", "gaps: operator compile"),
    ("gap_memory_alloc", "gaps: memory allocation"),
    ("gap_stream_wait", "gaps: wait on another stream"),
    ("gap_unattributed", "long gaps, cause not shown"),
    ("launch_gaps", "launch gaps (short, no cause shown)"),
    ("free_before", "free before the first task"),
    ("free_after", "free after the last task"),
)
IDLE_PARTS = tuple(p for p, _ in PARTS if p not in ("computing", "comm_not_overlapped"))

_TIME_WINDOWS = """
WITH st AS (
    SELECT run_id, step_id, start_ns, end_ns, computing_us, comm_not_overlapped_us, stage_us,
           coalesce(computing_us IS NOT NULL AND stage_us > 0, false) AS decomposed
    FROM steps
    WHERE (computing_us IS NOT NULL AND stage_us > 0) OR (start_ns IS NOT NULL AND end_ns > start_ns)),
w AS (
    SELECT st.run_id, st.step_id, 'step ' || coalesce(CAST(st.step_id AS VARCHAR), '?') AS subject,
           'step' AS basis, CASE WHEN st.decomposed THEN 'export step decomposition' ELSE 'timeline' END AS source,
           CASE WHEN st.start_ns IS NOT NULL AND st.end_ns > st.start_ns THEN st.start_ns ELSE r.start_ns END AS ms,
           CASE WHEN st.start_ns IS NOT NULL AND st.end_ns > st.start_ns THEN st.end_ns ELSE r.end_ns END AS me,
           CASE WHEN st.decomposed THEN st.stage_us ELSE (st.end_ns - st.start_ns) / 1000.0 END AS span_us,
           CASE WHEN st.decomposed THEN least(st.computing_us, st.stage_us) END AS export_computing_us,
           CASE WHEN st.decomposed THEN greatest(0, least(coalesce(st.comm_not_overlapped_us, 0),
                st.stage_us - least(st.computing_us, st.stage_us))) END AS export_comm_us
    FROM st JOIN _run_span r ON r.run_id = st.run_id
    UNION ALL
    SELECT r.run_id, NULL, coalesce('device ' || u.device_id, 'whole run'), 'profiled span', 'timeline', r.start_ns, r.end_ns,
           r.span_us, NULL, NULL
    FROM _run_span r LEFT JOIN runs u ON u.run_id = r.run_id
    WHERE r.span_us > 0 AND r.run_id NOT IN (SELECT run_id FROM st))
SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY step_id NULLS LAST, ms, subject) AS window_no
FROM w WHERE span_us > 0"""

_WINDOW_MEASURES = """
WITH clip AS (SELECT w.run_id, w.window_no, w.ms, w.me FROM _time_windows w WHERE w.me > w.ms),
b AS (SELECT c.run_id, c.window_no, sum(least(i.end_ns, c.me) - greatest(i.start_ns, c.ms)) AS ns
      FROM clip c JOIN _busy_intervals i ON i.run_id = c.run_id AND i.start_ns < c.me AND i.end_ns > c.ms GROUP BY ALL),
m AS (SELECT c.run_id, c.window_no, sum(least(i.end_ns, c.me) - greatest(i.start_ns, c.ms)) AS ns
      FROM clip c JOIN _comm_intervals i ON i.run_id = c.run_id AND i.start_ns < c.me AND i.end_ns > c.ms GROUP BY ALL),
mo AS (SELECT c.run_id, c.window_no,
              sum(greatest(0, least(i.end_ns, j.end_ns, c.me) - greatest(i.start_ns, j.start_ns, c.ms))) AS ns
       FROM clip c JOIN _comm_intervals i ON i.run_id = c.run_id AND i.start_ns < c.me AND i.end_ns > c.ms
       JOIN _busy_intervals j ON j.run_id = i.run_id AND j.start_ns < i.end_ns AND j.end_ns > i.start_ns
       GROUP BY ALL),
a AS (SELECT c.run_id, c.window_no, sum(least(i.end_ns, c.me) - greatest(i.start_ns, c.ms)) AS ns,
             min(greatest(i.start_ns, c.ms)) AS first_ns, max(least(i.end_ns, c.me)) AS last_ns
      FROM clip c JOIN _active_intervals i ON i.run_id = c.run_id AND i.start_ns < c.me AND i.end_ns > c.ms GROUP BY ALL),
g AS (SELECT a.run_id, a.window_no,
             coalesce(sum(g.end_ns - g.start_ns) FILTER (WHERE g.cause = 'host_sync'), 0) AS gap_host_sync,
             coalesce(sum(g.end_ns - g.start_ns) FILTER (WHERE g.cause = 'compile'), 0) AS gap_compile,
             coalesce(sum(g.end_ns - g.start_ns) FILTER (WHERE g.cause = 'memory_alloc'), 0) AS gap_memory_alloc,
             coalesce(sum(g.end_ns - g.start_ns) FILTER (WHERE g.cause = 'stream_wait'), 0) AS gap_stream_wait,
             coalesce(sum(g.end_ns - g.start_ns) FILTER (WHERE g.cause = 'unattributed' AND g.gap_us >= n.gap_threshold_us), 0) AS gap_unattributed,
             coalesce(sum(g.end_ns - g.start_ns) FILTER (WHERE g.cause = 'unattributed' AND g.gap_us < n.gap_threshold_us), 0) AS launch_gaps,
             count(*) FILTER (WHERE g.cause = 'unattributed' AND g.gap_us < n.gap_threshold_us) AS launch_gap_count,
             count(*) FILTER (WHERE g.cause <> 'unattributed' OR g.gap_us >= n.gap_threshold_us) AS long_gap_count
      FROM a JOIN _run_nominal n ON n.run_id = a.run_id
      JOIN _classified_gaps g ON g.run_id = a.run_id AND g.start_ns >= a.first_ns AND g.end_ns <= a.last_ns
      GROUP BY ALL)
SELECT c.run_id, c.window_no, c.me - c.ms AS window_ns, coalesce(b.ns, 0) AS computing,
       coalesce(m.ns, 0) - coalesce(mo.ns, 0) AS comm_not_overlapped,
       greatest(0, coalesce(a.ns, 0) - coalesce(b.ns, 0) - (coalesce(m.ns, 0) - coalesce(mo.ns, 0))) AS other_tasks,
       coalesce(g.gap_host_sync, 0) AS gap_host_sync, coalesce(g.gap_compile, 0) AS gap_compile,
       coalesce(g.gap_memory_alloc, 0) AS gap_memory_alloc, coalesce(g.gap_stream_wait, 0) AS gap_stream_wait,
       coalesce(g.gap_unattributed, 0) AS gap_unattributed, coalesce(g.launch_gaps, 0) AS launch_gaps,
       coalesce(g.launch_gap_count, 0) AS launch_gap_count, coalesce(g.long_gap_count, 0) AS long_gap_count,
       coalesce(a.first_ns, c.me) - c.ms AS free_before,
       c.me - coalesce(a.last_ns, c.me) AS free_after
FROM clip c LEFT JOIN b USING (run_id, window_no) LEFT JOIN m USING (run_id, window_no)
     LEFT JOIN mo USING (run_id, window_no) LEFT JOIN a USING (run_id, window_no) LEFT JOIN g USING (run_id, window_no)"""


_IDLE_SUM = " + ".join(IDLE_PARTS)
_PART_VALUES = ", ".join(f"({i}, '{p}', '{label}')" for i, (p, label) in enumerate(PARTS, 1))

# The parts of every window in microseconds. A measured window: each part from the timeline, in ns.
# A decomposed step: the export's computing and communication, the rest of the stage split over the
# idle parts in the timeline's proportions (all of it a gap of no shown cause when the timeline shows
# no idle time there). free_after takes what rounding leaves, so the parts add up to the span exactly.
_TIME_PARTS = f"""
WITH x AS (SELECT w.run_id, w.window_no, w.step_id, w.subject, w.basis, w.source, w.span_us, w.export_computing_us,
                  w.export_comm_us, {", ".join(f"coalesce(m.{p}, 0) AS {p}" for p in IDLE_PARTS)},
                  coalesce(m.computing, 0) AS computing, coalesce(m.comm_not_overlapped, 0) AS comm_not_overlapped
           FROM _time_windows w LEFT JOIN _window_measures m USING (run_id, window_no)),
y AS (SELECT *, {_IDLE_SUM} AS idle_ns,
             CASE WHEN export_computing_us IS NULL THEN 1.0 / 1000
                  ELSE (span_us - export_computing_us - export_comm_us) / nullif({_IDLE_SUM}, 0) END AS scale
      FROM x),
wide AS (SELECT run_id, window_no, step_id, subject, basis, source, span_us,
                coalesce(export_computing_us, computing / 1000.0) AS computing,
                coalesce(export_comm_us, comm_not_overlapped / 1000.0) AS comm_not_overlapped,
                {", ".join(f"{p} * coalesce(scale, 0) AS {p}" for p in IDLE_PARTS if p not in ("gap_unattributed", "free_after"))},
                gap_unattributed * coalesce(scale, 0)
                    + CASE WHEN scale IS NULL THEN span_us - export_computing_us - export_comm_us ELSE 0 END AS gap_unattributed
         FROM y),
fixed AS (SELECT wide.*, span_us - ({" + ".join(p for p, _ in PARTS if p != "free_after")}) AS free_after FROM wide),
parts AS (UNPIVOT fixed ON {", ".join(p for p, _ in PARTS)} INTO NAME part VALUE part_us),
named AS (SELECT p.*, n.part_no, n.label FROM parts p JOIN (VALUES {_PART_VALUES}) n(part_no, part, label) USING (part))
SELECT run_id, window_no, step_id, subject, basis, source, span_us, part_no, part, label, part_us,
       part_us / span_us AS share
FROM named"""

# Shares in tenths of a percent that add up to exactly 100.0% (largest remainder), and the text.
_PERCENT = """
WITH r AS (SELECT *, greatest(0, share) * 1000 AS raw, floor(greatest(0, share) * 1000) AS fl FROM {source}),
q AS (SELECT *, round(1000 - sum(fl) OVER (PARTITION BY run_id, window_no)) AS left_units,
             row_number() OVER (PARTITION BY run_id, window_no ORDER BY raw - fl DESC, part_no) AS rr FROM r)
SELECT * EXCLUDE (raw, fl, left_units, rr), (fl + CASE WHEN rr <= left_units THEN 1 ELSE 0 END) / 10.0 AS share_pct
FROM q"""

# Window 0 of a run: all its windows together (the run's breakdown), listed only when it has several.
_RUN_PARTS = """
WITH one AS (SELECT * FROM _time_parts),
tot AS (SELECT run_id, count(DISTINCT window_no) AS windows, CASE WHEN count(DISTINCT window_no) > 1 THEN 'steps'
               ELSE any_value(basis) END AS basis, string_agg(DISTINCT source, ' + ' ORDER BY source) AS source,
               sum(span_us) FILTER (WHERE part_no = 1) AS span_us
        FROM one GROUP BY run_id),
all_w AS (SELECT o.run_id, 0 AS window_no, NULL::BIGINT AS step_id,
                 CASE WHEN t.windows = 1 THEN any_value(o.subject) ELSE t.windows || ' steps' END AS subject,
                 t.basis, t.source, t.span_us, o.part_no, o.part, o.label, sum(o.part_us) AS part_us,
                 sum(o.part_us) / t.span_us AS share
          FROM one o JOIN tot t USING (run_id) GROUP BY o.run_id, t.windows, t.basis, t.source, t.span_us, o.part_no, o.part, o.label)
SELECT * FROM one UNION ALL SELECT * FROM all_w"""

_TIME_BREAKDOWN = f"""
SELECT run_id, window_no, any_value(step_id) AS step_id, any_value(subject) AS subject, any_value(basis) AS basis,
       any_value(source) AS source, any_value(span_us) AS span_us,
       {", ".join(f"sum(part_us) FILTER (WHERE part = '{p}') AS {p}_us" for p, _ in PARTS)},
       sum(part_us) FILTER (WHERE part LIKE 'gap_%') AS gaps_us,
       sum(part_us) FILTER (WHERE part <> 'computing') AS not_computing_us,
       sum(share_pct) FILTER (WHERE part LIKE 'gap_%') AS gaps_pct,
       {", ".join(f"any_value(share_pct) FILTER (WHERE part = '{p}') AS {p}_pct" for p, _ in PARTS)},
       string_agg(printf('%s %.3f us (%.1f%%)', label, part_us, share_pct), '; ' ORDER BY part_no)
           FILTER (WHERE part_us > 0.0005 OR share_pct > 0) AS breakdown
FROM _time_shares GROUP BY run_id, window_no"""

# name -> (documentation, SQL), in dependency order; views.py adds them to its helper relations.
BREAKDOWN_VIEWS: dict[str, tuple[str, str]] = {
    "_time_windows": (
        "The windows the time breakdown covers: each step (by its timestamps, or the export's stage length "
        "when the export decomposes it), else the profiled span. Columns: run_id, window_no (1..), step_id, "
        "subject ('step N' | 'device D' | 'whole run'), basis ('step' | 'profiled span'; window 0 of several "
        "steps: 'steps'), source ('export step decomposition' | 'timeline'), ms, me (the window measured on the timeline), span_us, export_computing_us, "
        "export_comm_us (the export's own decomposition, else NULL).",
        _TIME_WINDOWS,
    ),
    "_window_measures": (
        "What the device timeline shows in each window, in ns: computing, comm_not_overlapped, other_tasks, "
        "gaps with a cause the timeline shows (gap_host_sync, gap_compile, gap_memory_alloc, gap_stream_wait), "
        "gap_unattributed (no cause, at least _run_nominal.gap_threshold_us), launch_gaps (no cause, shorter), "
        "their counts, free_before, free_after.",
        _WINDOW_MEASURES,
    ),
    "_time_parts": (
        "THE time breakdown, long form: per run, window and part (see breakdown_views.PARTS) part_us and share "
        "of the window's span_us; the parts of a window add up to its span exactly.",
        _TIME_PARTS,
    ),
    "_time_shares": (
        "_time_parts plus window 0 (all windows of the run together) and share_pct: each part's share in "
        "tenths of a percent, rounded so that a window's shares add up to exactly 100.0%.",
        _PERCENT.format(source=f"({_RUN_PARTS})"),
    ),
    "_time_breakdown": (
        "THE time breakdown, wide: one row per run and window (window 0: the whole run) with <part>_us and "
        "<part>_pct for every part, gaps_us, not_computing_us and breakdown (the text every report prints).",
        _TIME_BREAKDOWN,
    ),
}
