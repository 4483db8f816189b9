-- The time breakdown: every microsecond of each step (or of the span) in exactly one named part. One
-- definition read by the rules, the run summary, the JSON and the step chart. The parts, in the order
-- every breakdown lists them (part_no 1..12): computing (some compute task runs: _busy_intervals),
-- comm_not_overlapped (only communication runs), other_tasks (only tasks that neither compute nor
-- communicate), gap_host_sync, gap_compile, gap_memory_alloc, gap_stream_wait, gap_host_setup (the
-- device idle between two tasks while the timeline shows that cause inside: a host synchronize or copy,
-- an operator compile, an allocation, a wait on another stream, a device / HCCL init or retry that the
-- CANN logs show; any length; gap_host_setup is listed only for a run whose timeline holds log records,
-- `diagnose --logs`), gap_unattributed (idle between two tasks for
-- at least _run_nominal.gap_threshold_us, no cause shown), launch_gaps (idle for less than that, no
-- cause shown: the host issues operators more slowly than the device runs them), free_before and
-- free_after (idle before the first task or after the last one of the window). Nothing else is "free".
--
-- A window is a step (its timestamps) or, without steps, the profiled span. Where the export decomposes
-- a step itself (steps.computing_us and stage_us: torch_npu's step_trace_time), computing and
-- communication not overlapped are the export's, and the rest of the stage (the idle time) is split
-- over the gap parts in the proportions the device timeline shows in the step window (or in the span
-- when the step has no timestamps). The stage runs from the step's first task to its last (torch_npu's
-- Stage; its Preparing, before the first task, is apart), as msprof's step does (FP Start to Iteration
-- End): its idle time is the gaps between its tasks, none of it free before or after them.

-- @view _steps_decomposed
-- @internal
-- Every steps row and whether the export decomposes that step itself: its computing time and a stage
-- (torch_npu's step_trace_time). Such a step's breakdown parts are the export's (_time_windows), and its
-- Preparing, before the stage's first task, stands apart from it (the run summary's step_preparing_us).
-- @column steps.*             every column of steps (docs/schema.md)
-- @column decomposed BOOLEAN  the export gives the step's computing time and a stage longer than zero
SELECT *, coalesce(computing_us IS NOT NULL AND stage_us > 0, FALSE) AS decomposed FROM steps;

-- @table _time_windows
-- The windows the time breakdown covers: each step (by its timestamps, or the export's stage length
-- when the export decomposes it), else the profiled span.
-- @column run_id              VARCHAR  the run
-- @column step_id             BIGINT   the step (NULL for the profiled span)
-- @column subject             VARCHAR  'step N', 'device D' or 'whole run'
-- @column basis               VARCHAR  'step' or 'profiled span'
-- @column source              VARCHAR  'export step decomposition' or 'timeline'
-- @column ms                  BIGINT   start of the window measured on the timeline
-- @column me                  BIGINT   end of the window measured on the timeline
-- @column span_us             DOUBLE   the window's length in microseconds (the export's stage length where it
--                                      decomposes the step)
-- @column export_computing_us DOUBLE   the export's own computing time of the step, else NULL
-- @column export_comm_us      DOUBLE   the export's own communication not overlapped of the step, else NULL
-- @column window_no           BIGINT   1.. per run, by step, start and subject
WITH step_rows AS (
    SELECT run_id, step_id, start_ns, end_ns, computing_us, comm_not_overlapped_us, stage_us, decomposed
    FROM _steps_decomposed
    WHERE decomposed OR (start_ns IS NOT NULL AND end_ns > start_ns)),
windows AS (
    SELECT st.run_id, st.step_id, 'step ' || coalesce(st.step_id::VARCHAR, '?') AS subject,
           'step' AS basis, CASE WHEN st.decomposed THEN 'export step decomposition' ELSE 'timeline' END AS source,
           CASE WHEN st.start_ns IS NOT NULL AND st.end_ns > st.start_ns THEN st.start_ns ELSE r.start_ns END AS ms,
           CASE WHEN st.start_ns IS NOT NULL AND st.end_ns > st.start_ns THEN st.end_ns ELSE r.end_ns END AS me,
           CASE WHEN st.decomposed THEN st.stage_us ELSE (st.end_ns - st.start_ns) / 1000.0 END AS span_us,
           CASE WHEN st.decomposed THEN least(st.computing_us, st.stage_us) END AS export_computing_us,
           CASE WHEN st.decomposed THEN greatest(0, least(coalesce(st.comm_not_overlapped_us, 0),
                st.stage_us - least(st.computing_us, st.stage_us))) END AS export_comm_us
    FROM step_rows st JOIN _run_span r ON r.run_id = st.run_id
    UNION ALL
    SELECT r.run_id, NULL, coalesce('device ' || u.device_id, 'whole run'), 'profiled span', 'timeline', r.start_ns,
           r.end_ns, r.span_us, NULL, NULL
    FROM _run_span r LEFT JOIN runs u ON u.run_id = r.run_id
    WHERE r.span_us > 0 AND r.run_id NOT IN (SELECT run_id FROM step_rows))
SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY step_id NULLS LAST, ms, subject) AS window_no
FROM windows WHERE span_us > 0;

-- @table _time_part_names
-- THE list of the time breakdown's parts, the one place that names them and orders them: the
-- relations below, the diagnosis (JSON, Markdown, terminal) and the charts list the parts in part_no
-- order, under their labels.
-- @column part_no  INTEGER  1..12, the order every breakdown lists the parts in
-- @column part     VARCHAR  the part's name (the <part>_us and <part>_pct columns of _time_breakdown)
-- @column label    VARCHAR  the part's printed label
-- @column gap_kind VARCHAR  for a part made of gaps between two tasks, the gaps it sums: their
--                           _classified_gaps cause, or 'launch' for a gap of no shown cause shorter than
--                           _run_nominal.gap_threshold_us; NULL for the other parts
SELECT *
FROM (VALUES (1, 'computing', 'computing', NULL),
             (2, 'comm_not_overlapped', 'communication not overlapped', NULL),
             (3, 'other_tasks', 'other device tasks', NULL),
             (4, 'gap_host_sync', 'gaps: host synchronize / copy', 'host_sync'),
             (5, 'gap_compile', 'gaps: operator compile', 'compile'),
             (6, 'gap_memory_alloc', 'gaps: memory allocation', 'memory_alloc'),
             (7, 'gap_stream_wait', 'gaps: wait on another stream', 'stream_wait'),
             (8, 'gap_host_setup', 'gaps: device / HCCL init or retry (logs)', 'host_setup'),
             (9, 'gap_unattributed', 'long gaps, cause not shown', 'unattributed'),
             (10, 'launch_gaps', 'launch gaps (short, no cause shown)', 'launch'),
             (11, 'free_before', 'free before the first task', NULL),
             (12, 'free_after', 'free after the last task', NULL)) AS parts (part_no, part, label, gap_kind);

-- @table _window_measures
-- @internal
-- What the device timeline shows in each window, in nanoseconds (the parts before the export's
-- decomposition is applied), one column per part of _time_part_names in its order, the gap counts before
-- the two free parts.
-- @column run_id              VARCHAR  the run
-- @column window_no           BIGINT   the window (_time_windows)
-- @column window_ns           BIGINT   me - ms
-- @column computing           HUGEINT  time some compute task ran
-- @column comm_not_overlapped HUGEINT  time communication ran and no compute task did
-- @column other_tasks         HUGEINT  time only other device tasks ran
-- @column gap_host_sync       HUGEINT  gaps with a host synchronize or copy inside
-- @column gap_compile         HUGEINT  gaps with an operator compile inside
-- @column gap_memory_alloc    HUGEINT  gaps with a memory allocation inside
-- @column gap_stream_wait     HUGEINT  gaps with a wait on another stream inside
-- @column gap_host_setup      HUGEINT  gaps with a device / HCCL init or a retry inside (from the CANN logs)
-- @column gap_unattributed    HUGEINT  gaps of no shown cause, at least _run_nominal.gap_threshold_us long
-- @column launch_gaps         HUGEINT  gaps of no shown cause, shorter than that
-- @column launch_gap_count    BIGINT   how many launch gaps
-- @column long_gap_count      BIGINT   how many other gaps
-- @column free_before         HUGEINT  idle before the window's first task
-- @column free_after          HUGEINT  idle after the window's last task
WITH windows AS (SELECT w.run_id, w.window_no, w.ms, w.me FROM _time_windows w WHERE w.me > w.ms),
busy AS (SELECT c.run_id, c.window_no, sum(least(i.end_ns, c.me) - greatest(i.start_ns, c.ms)) AS ns
         FROM windows c JOIN _busy_intervals i ON i.run_id = c.run_id AND i.start_ns < c.me AND i.end_ns > c.ms
         GROUP BY ALL),
comm AS (SELECT c.run_id, c.window_no, sum(least(i.end_ns, c.me) - greatest(i.start_ns, c.ms)) AS ns
         FROM windows c JOIN _comm_intervals i ON i.run_id = c.run_id AND i.start_ns < c.me AND i.end_ns > c.ms
         GROUP BY ALL),
comm_busy AS (SELECT c.run_id, c.window_no,
                     sum(greatest(0, least(i.end_ns, j.end_ns, c.me) - greatest(i.start_ns, j.start_ns, c.ms))) AS ns
              FROM windows c JOIN _comm_intervals i ON i.run_id = c.run_id AND i.start_ns < c.me AND i.end_ns > c.ms
              JOIN _busy_intervals j ON j.run_id = i.run_id AND j.start_ns < i.end_ns AND j.end_ns > i.start_ns
              GROUP BY ALL),
active AS (SELECT c.run_id, c.window_no, sum(least(i.end_ns, c.me) - greatest(i.start_ns, c.ms)) AS ns,
                  min(greatest(i.start_ns, c.ms)) AS first_ns, max(least(i.end_ns, c.me)) AS last_ns
           FROM windows c JOIN _active_intervals i ON i.run_id = c.run_id AND i.start_ns < c.me AND i.end_ns > c.ms
           GROUP BY ALL),
gaps AS (SELECT a.run_id, a.window_no, g.end_ns - g.start_ns AS ns,
                CASE WHEN g.cause = 'unattributed' AND g.gap_us < n.gap_threshold_us THEN 'launch' ELSE g.cause END
                    AS gap_kind
         FROM active a JOIN _run_nominal n ON n.run_id = a.run_id
         JOIN _classified_gaps g ON g.run_id = a.run_id AND g.start_ns >= a.first_ns AND g.end_ns <= a.last_ns),
task_parts AS (  -- the parts measured on the task intervals, one column each, named as in _time_part_names
    SELECT c.run_id, c.window_no, coalesce(b.ns, 0) AS computing,
           coalesce(m.ns, 0) - coalesce(mo.ns, 0) AS comm_not_overlapped,
           greatest(0, coalesce(a.ns, 0) - coalesce(b.ns, 0) - (coalesce(m.ns, 0) - coalesce(mo.ns, 0))) AS other_tasks,
           coalesce(a.first_ns, c.me) - c.ms AS free_before, c.me - coalesce(a.last_ns, c.me) AS free_after
    FROM windows c LEFT JOIN busy b USING (run_id, window_no) LEFT JOIN comm m USING (run_id, window_no)
    LEFT JOIN comm_busy mo USING (run_id, window_no) LEFT JOIN active a USING (run_id, window_no)),
part_ns AS (  -- every part of every window, long: the task parts, then the gaps of each kind
    SELECT run_id, window_no, part, ns
    FROM (UNPIVOT task_parts ON COLUMNS(* EXCLUDE (run_id, window_no)) INTO NAME part VALUE ns)
    UNION ALL
    SELECT g.run_id, g.window_no, p.part, g.ns FROM gaps g JOIN _time_part_names p ON p.gap_kind = g.gap_kind),
measured AS (PIVOT part_ns ON part IN (SELECT part FROM _time_part_names ORDER BY part_no) USING sum(ns)
             GROUP BY run_id, window_no),
gap_counts AS (SELECT run_id, window_no, count(*) FILTER (WHERE gap_kind = 'launch') AS launch_gap_count,
                      count(*) FILTER (WHERE gap_kind <> 'launch') AS long_gap_count
               FROM gaps GROUP BY ALL)
SELECT c.run_id, c.window_no, c.me - c.ms AS window_ns,
       coalesce(COLUMNS(m.* EXCLUDE (run_id, window_no, free_before, free_after)), 0),
       coalesce(k.launch_gap_count, 0) AS launch_gap_count, coalesce(k.long_gap_count, 0) AS long_gap_count,
       m.free_before, m.free_after  -- last, as this relation has always listed them
FROM windows c JOIN measured m USING (run_id, window_no) LEFT JOIN gap_counts k USING (run_id, window_no);

-- @table _time_parts
-- @internal
-- THE time breakdown, long form: per run, window and part; the parts of a window add up to its span
-- exactly. A measured window: each part from the timeline. A decomposed step: the export's computing
-- and communication, the rest of the stage split over the gap parts in the timeline's proportions (all
-- of it a gap of no shown cause when the timeline shows no gap there); no free time (the stage runs from
-- the first task to the last). free_after takes what rounding leaves.
-- @column run_id    VARCHAR  the run
-- @column window_no BIGINT   the window (_time_windows)
-- @column step_id   BIGINT   its step
-- @column subject   VARCHAR  its subject ('step N', 'device D', 'whole run')
-- @column basis     VARCHAR  'step' or 'profiled span'
-- @column source    VARCHAR  'export step decomposition' or 'timeline'
-- @column span_us   DOUBLE   the window's span in microseconds
-- @column part_no   INTEGER  1..12, the order every breakdown lists the parts in
-- @column part      VARCHAR  the part's name (_time_part_names)
-- @column label     VARCHAR  the part's printed label
-- @column part_us   DOUBLE   the part's time in microseconds
-- @column share     DOUBLE   part_us / span_us
WITH measured AS (  -- each window's parts as the timeline shows them, in ns (0 where it shows none)
    SELECT w.*, p.part_no, p.part, p.label, coalesce(m.ns, 0) AS ns
    FROM _time_windows w CROSS JOIN _time_part_names p
    LEFT JOIN (UNPIVOT _window_measures ON COLUMNS(* EXCLUDE (run_id, window_no, window_ns, launch_gap_count,
                                                              long_gap_count)) INTO NAME part VALUE ns) m
        ON m.run_id = w.run_id AND m.window_no = w.window_no AND m.part = p.part),
idle_scale AS (  -- us per measured ns of the idle parts: the export's idle time spread in the timeline's proportions
    -- (a decomposed step's over its gaps only: the window's time before the first task and after the last one,
    -- free on the timeline, is outside its stage)
    SELECT run_id, window_no, any_value(export_computing_us) IS NOT NULL AS decomposed,
           CASE WHEN NOT decomposed THEN 1.0 / 1000
                ELSE (any_value(span_us) - any_value(export_computing_us) - any_value(export_comm_us))
                     / nullif(sum(ns) FILTER (WHERE part NOT IN ('computing', 'comm_not_overlapped', 'free_before',
                                                                 'free_after')), 0)
                END AS scale
    FROM measured GROUP BY run_id, window_no),
scaled AS (
    SELECT m.*,
           CASE WHEN m.part = 'computing' THEN coalesce(m.export_computing_us, m.ns / 1000.0)
                WHEN m.part = 'comm_not_overlapped' THEN coalesce(m.export_comm_us, m.ns / 1000.0)
                WHEN s.decomposed AND m.part IN ('free_before', 'free_after') THEN 0
                ELSE m.ns * coalesce(s.scale, 0)
                     + CASE WHEN m.part = 'gap_unattributed' AND s.scale IS NULL
                            THEN m.span_us - m.export_computing_us - m.export_comm_us ELSE 0 END
                END AS part_us
    FROM measured m JOIN idle_scale s USING (run_id, window_no)),
placed AS (  -- the time of every part but free_after, added in part order
    SELECT run_id, window_no, list_sum(list(part_us ORDER BY part_no)) AS placed_us
    FROM scaled WHERE part <> 'free_after' GROUP BY run_id, window_no)
SELECT s.run_id, s.window_no, s.step_id, s.subject, s.basis, s.source, s.span_us, s.part_no, s.part, s.label,
       CASE WHEN s.part = 'free_after' THEN s.span_us - p.placed_us ELSE s.part_us END AS part_us,
       CASE WHEN s.part = 'free_after' THEN s.span_us - p.placed_us ELSE s.part_us END / s.span_us AS share
FROM scaled s JOIN placed p USING (run_id, window_no)
WHERE s.part <> 'gap_host_setup' OR s.run_id IN (SELECT run_id FROM timeline WHERE kind = 'log');

-- @table _time_shares
-- _time_parts plus window 0 (all windows of the run together) and each part's share in tenths of a
-- percent, rounded (largest remainder) so that a window's shares add up to exactly 100.0%. The parts'
-- times are rounded the same way to whole nanoseconds (the export's decomposition scales parts to
-- fractions of one): printed with three decimals of a microsecond, as every report and message prints
-- them, a window's parts add up to its printed span.
-- Sums over several windows or parts add DECIMALs (nanosecond-exact to 1e-9 us), not DOUBLEs: a
-- parallel DOUBLE sum's last bit depends on the order threads meet the rows, and the catalog, which
-- reads window 0 (_run_busy), must be the same whichever machine or executor computed it.
-- @column _time_parts.*         the columns of _time_parts (window 0: subject 'N steps' or the one window's,
--                               basis 'steps' when there are several, the sources joined by ' + '; part_us
--                               in whole nanoseconds, adding up to span_us in whole nanoseconds)
-- @column share_pct     DOUBLE  the part's share of the window in percent, one decimal
WITH run_totals AS (
    SELECT run_id, count(DISTINCT window_no) AS windows,
           CASE WHEN count(DISTINCT window_no) > 1 THEN 'steps' ELSE any_value(basis) END AS basis,
           string_agg(DISTINCT source, ' + ' ORDER BY source) AS source,
           sum(span_us::DECIMAL(38, 9)) FILTER (WHERE part_no = 1)::DOUBLE AS span_us
    FROM _time_parts GROUP BY run_id),
whole_run AS (
    SELECT o.run_id, 0 AS window_no, NULL::BIGINT AS step_id,
           CASE WHEN t.windows = 1 THEN any_value(o.subject) ELSE t.windows || ' steps' END AS subject,
           t.basis, t.source, t.span_us, o.part_no, o.part, o.label, sum(o.part_us::DECIMAL(38, 9))::DOUBLE AS part_us,
           sum(o.part_us::DECIMAL(38, 9))::DOUBLE / t.span_us AS share
    FROM _time_parts o JOIN run_totals t USING (run_id)
    GROUP BY o.run_id, t.windows, t.basis, t.source, t.span_us, o.part_no, o.part, o.label),
units AS (  -- shares in tenths of a percent and times in ns, each with its floor
    SELECT *, greatest(0, share) * 1000 AS raw, floor(greatest(0, share) * 1000) AS fl,
           part_us * 1000 AS raw_ns, floor(part_us * 1000) AS fl_ns
    FROM (SELECT * FROM _time_parts
          UNION ALL
          SELECT * FROM whole_run)),
ranked AS (  -- what the floors leave, and each part's rank by its remainder (largest first)
    SELECT *, round(1000 - sum(fl) OVER w) AS left_units, row_number() OVER (w ORDER BY raw - fl DESC, part_no) AS rr,
           round(span_us * 1000) - sum(fl_ns) OVER w AS left_ns,
           row_number() OVER (w ORDER BY raw_ns - fl_ns DESC, part_no) AS rr_ns
    FROM units WINDOW w AS (PARTITION BY run_id, window_no))
SELECT * EXCLUDE (raw, fl, left_units, rr, raw_ns, fl_ns, left_ns, rr_ns)
         REPLACE ((fl_ns + CASE WHEN rr_ns <= left_ns THEN 1 ELSE 0 END) / 1000 AS part_us),
       (fl + CASE WHEN rr <= left_units THEN 1 ELSE 0 END) / 10.0 AS share_pct
FROM ranked;

-- @table _time_breakdown
-- THE time breakdown, wide: one row per run and window (window 0: the whole run), with each part's
-- time and share. The <part>_us of a window add up to its span_us, the <part>_pct to 100.0.
-- @column run_id                  VARCHAR  the run
-- @column window_no               BIGINT   the window (0: all windows of the run together)
-- @column step_id                 BIGINT   its step
-- @column subject                 VARCHAR  its subject
-- @column basis                   VARCHAR  'step', 'steps' or 'profiled span'
-- @column source                  VARCHAR  'export step decomposition', 'timeline', or both joined by ' + '
-- @column span_us                 DOUBLE   the window's span in microseconds
-- @column computing_us            DOUBLE   part computing (THE busy time: _run_busy), us
-- @column comm_not_overlapped_us  DOUBLE   part comm_not_overlapped, us
-- @column other_tasks_us          DOUBLE   part other_tasks, us
-- @column gap_host_sync_us        DOUBLE   part gap_host_sync, us
-- @column gap_compile_us          DOUBLE   part gap_compile, us
-- @column gap_memory_alloc_us     DOUBLE   part gap_memory_alloc, us
-- @column gap_stream_wait_us      DOUBLE   part gap_stream_wait, us
-- @column gap_host_setup_us       DOUBLE   part gap_host_setup, us (NULL unless the run's timeline holds log records)
-- @column gap_unattributed_us     DOUBLE   part gap_unattributed, us
-- @column launch_gaps_us          DOUBLE   part launch_gaps, us
-- @column free_before_us          DOUBLE   part free_before, us
-- @column free_after_us           DOUBLE   part free_after, us
-- @column gaps_us                 DOUBLE   the gap_* parts together, us
-- @column not_computing_us        DOUBLE   every part but computing, us
-- @column gaps_pct                DOUBLE   the gap_* parts' shares together, %
-- @column computing_pct           DOUBLE   share of computing, % (one decimal; the shares add up to 100.0)
-- @column comm_not_overlapped_pct DOUBLE   share of comm_not_overlapped, %
-- @column other_tasks_pct         DOUBLE   share of other_tasks, %
-- @column gap_host_sync_pct       DOUBLE   share of gap_host_sync, %
-- @column gap_compile_pct         DOUBLE   share of gap_compile, %
-- @column gap_memory_alloc_pct    DOUBLE   share of gap_memory_alloc, %
-- @column gap_stream_wait_pct     DOUBLE   share of gap_stream_wait, %
-- @column gap_host_setup_pct      DOUBLE   share of gap_host_setup, %
-- @column gap_unattributed_pct    DOUBLE   share of gap_unattributed, %
-- @column launch_gaps_pct         DOUBLE   share of launch_gaps, %
-- @column free_before_pct         DOUBLE   share of free_before, %
-- @column free_after_pct          DOUBLE   share of free_after, %
-- @column breakdown               VARCHAR  the text every report prints: 'label us (pct%)' per non-zero part, by part_no
WITH windows AS (SELECT run_id, window_no, any_value(step_id) AS step_id, any_value(subject) AS subject,
                        any_value(basis) AS basis, any_value(source) AS source, any_value(span_us) AS span_us,
                        sum(part_us::DECIMAL(38, 9)) FILTER (WHERE part LIKE 'gap_%')::DOUBLE AS gaps_us,
                        sum(part_us::DECIMAL(38, 9)) FILTER (WHERE part <> 'computing')::DOUBLE AS not_computing_us,
                        sum(share_pct::DECIMAL(38, 9)) FILTER (WHERE part LIKE 'gap_%')::DOUBLE AS gaps_pct,
                        string_agg(printf('%s %.3f us (%.1f%%)', label, part_us, share_pct), '; ' ORDER BY part_no)
                            FILTER (WHERE part_us > 0.0005 OR share_pct > 0) AS breakdown
                 FROM _time_shares GROUP BY run_id, window_no),
part_times AS (PIVOT (SELECT run_id, window_no, part, part_us FROM _time_shares)
               ON part IN (SELECT part FROM _time_part_names ORDER BY part_no) USING sum(part_us) AS us
               GROUP BY run_id, window_no),
part_shares AS (PIVOT (SELECT run_id, window_no, part, share_pct FROM _time_shares)
                ON part IN (SELECT part FROM _time_part_names ORDER BY part_no) USING any_value(share_pct) AS pct
                GROUP BY run_id, window_no)
SELECT w.* EXCLUDE (gaps_us, not_computing_us, gaps_pct, breakdown), u.* EXCLUDE (run_id, window_no),
       w.gaps_us, w.not_computing_us, w.gaps_pct, c.* EXCLUDE (run_id, window_no), w.breakdown
FROM windows w JOIN part_times u USING (run_id, window_no) JOIN part_shares c USING (run_id, window_no);
