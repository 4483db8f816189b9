-- Idle stretches of the device and of each stream, and what the timeline shows inside a device gap.
-- A gap opens where a task starts after every earlier-starting task has ended (_intervals_gaps: one
-- sort of ops, no interval join). Beware: DuckDB's least/greatest ignore NULLs.

-- @table _device_gaps
-- Idle stretches of the device between consecutive active intervals (no task of any type ran). The
-- step is the latest steps window starting at or before the gap start (of windows starting together,
-- the one ending last, then the lowest step id) when the gap starts inside it, else the step of the
-- task after the gap.
-- @column run_id       VARCHAR  the run
-- @column device_id    INTEGER  the device
-- @column step_id      BIGINT   the step holding the gap start (see above)
-- @column start_ns     BIGINT   start of the gap: the latest end of the tasks before it
-- @column end_ns       BIGINT   end of the gap: the start of the task after it
-- @column gap_us       DOUBLE   its length in microseconds
-- @column op_before    VARCHAR  op_name of the last task to end before the gap
-- @column op_after     VARCHAR  op_name of the first task after it
-- @column stream_after INTEGER  stream_id of the task after it
WITH src AS (  -- noqa: ST03
    SELECT { 'run_id': run_id, 'device_id': device_id } AS key, rowid AS rid, start_ns, end_ns FROM ops
    WHERE start_ns IS NOT NULL AND end_ns IS NOT NULL AND end_ns >= start_ns),
gaps AS (SELECT m.key.run_id AS run_id, m.key.device_id AS device_id, m.start_ns, m.end_ns, m.prev_rid, m.rid
         FROM _intervals_gaps(src) m),
step_starts AS (SELECT run_id, start_ns, max(end_ns) AS end_ns, arg_max(step_id, (end_ns, -step_id)) AS step_id
                FROM steps WHERE start_ns IS NOT NULL GROUP BY run_id, start_ns),
-- Only a gap starting inside its run's steps can be in one: the others skip the ASOF join's sort (all of
-- a run's gaps when its export has no steps).
step_spans AS (SELECT run_id, min(start_ns) AS first_ns, max(end_ns) AS last_ns FROM step_starts GROUP BY run_id),
gaps_in_steps AS (SELECT g.*, CASE WHEN g.start_ns < ks.end_ns THEN ks.step_id END AS step_in
                  FROM (SELECT * FROM gaps g SEMI JOIN step_spans s
                        ON s.run_id = g.run_id AND g.start_ns >= s.first_ns AND g.start_ns < s.last_ns) AS g
                  ASOF LEFT JOIN step_starts ks ON ks.run_id = g.run_id AND g.start_ns >= ks.start_ns
                  UNION ALL
                  SELECT g.*, NULL AS step_in FROM gaps g ANTI JOIN step_spans s
                      ON s.run_id = g.run_id AND g.start_ns >= s.first_ns AND g.start_ns < s.last_ns)
SELECT gs.run_id, gs.device_id, coalesce(gs.step_in, a.step_id) AS step_id, gs.start_ns, gs.end_ns,
       (gs.end_ns - gs.start_ns) / 1000.0 AS gap_us, b.op_name AS op_before, a.op_name AS op_after,
       a.stream_id AS stream_after
FROM gaps_in_steps gs JOIN ops a ON a.rowid = gs.rid JOIN ops b ON b.rowid = gs.prev_rid;

-- @view _stream_gaps
-- @internal
-- Gaps between consecutive tasks of one stream. A view: a rule reads it once with a threshold on
-- gap_us that DuckDB applies before the op-name joins (as a table, every gap of every stream would
-- have its names joined).
-- @column run_id    VARCHAR  the run
-- @column device_id INTEGER  the device
-- @column stream_id INTEGER  the stream
-- @column step_id   BIGINT   step of the task after the gap
-- @column start_ns  BIGINT   start of the gap: the latest end of the stream's tasks before it
-- @column end_ns    BIGINT   end of the gap: the start of the task after it
-- @column gap_us    DOUBLE   its length in microseconds
-- @column op_before VARCHAR  op_name of the last task to end before the gap
-- @column op_after  VARCHAR  op_name of the task after it
WITH src AS (  -- noqa: ST03
    SELECT { 'run_id': run_id, 'device_id': device_id, 'stream_id': stream_id } AS key, rowid AS rid,
           start_ns, end_ns
    FROM ops WHERE stream_id IS NOT NULL AND start_ns IS NOT NULL AND end_ns >= start_ns)
SELECT g.key.run_id AS run_id, g.key.device_id AS device_id, g.key.stream_id AS stream_id, a.step_id, g.start_ns,
       g.end_ns, (g.end_ns - g.start_ns) / 1000.0 AS gap_us, b.op_name AS op_before, a.op_name AS op_after
FROM _intervals_gaps(src) g JOIN ops a ON a.rowid = g.rid JOIN ops b ON b.rowid = g.prev_rid;

-- @table _gap_causes
-- @internal
-- Timeline events overlapping a device gap, classified by what they show the host or device doing. The
-- records of CANN logs placed on the timeline by `diagnose --logs` (kind 'log', analyzer/logs/marks.py)
-- are such events: their category is the host activity the log shows.
-- A sweep, not an interval join: the gaps of a device are disjoint and numbered in time order, so the
-- gaps an event overlaps are the run from the first one ending after it starts to the last one
-- starting before it ends (ASOF joins). A host event counts only in a gap lasting until it is over
-- (below), which only that last gap can be: one ASOF join. The events of no device (and the gaps of no
-- device) meet every device's: the OR of the device match is three equi-joins, no nested loop.
-- A gap is its row of _device_gaps (gap_row), which holds its run, device and start: its events' rows do
-- not carry them.
-- @column cause        VARCHAR  'host_sync' (stream/device synchronize, memcpy, .cpu()/item()), 'compile' (op
--                               compile), 'memory_alloc' (malloc), 'stream_wait' (device EVENT_WAIT / Notify Wait),
--                               or from a log record: 'memory_alloc', 'compile' or 'host_setup' (device / HCCL
--                               init, a retry)
-- @column event_name   VARCHAR  name of the timeline event
-- @column overlap_us   DOUBLE   event time inside the gap, in microseconds
-- @column gap_row      BIGINT   the gap's rowid in _device_gaps (_gap_cause_top groups and _classified_gaps joins on it)
-- A device (key) with its run's task switch time (one _run_nominal row per run), which the host events' test reads.
WITH gap_keys AS (
    SELECT k.run_id, k.device_id, row_number() OVER (ORDER BY k.run_id, k.device_id) AS key_no, n.task_switch_us
    FROM (SELECT DISTINCT run_id, device_id FROM _device_gaps) AS k JOIN _run_nominal AS n ON k.run_id = n.run_id),
-- Narrow rows (numbers and short codes; names are joined at the end): the joins below sort them.
gaps AS (
    SELECT k.key_no, g.rowid AS gap_row, g.start_ns, g.end_ns, g.gap_us
    FROM _device_gaps AS g JOIN gap_keys AS k ON g.run_id = k.run_id AND g.device_id IS NOT DISTINCT FROM k.device_id),
events AS (
    SELECT * FROM (
        SELECT rowid AS event_row, run_id, device_id, kind = 'device_task' AS is_task, start_ns, end_ns,
               CASE
                   WHEN kind IN ('host_api', 'framework_op') AND (name ILIKE '%SynchronizeStream%'
                        OR name ILIKE '%SynchronizeDevice%' OR name ILIKE '%SynchronizeEvent%'
                        OR name ILIKE '%Memcpy%' OR name ILIKE '%.cpu%' OR name ILIKE '%aten::item%'
                        OR name ILIKE '%_local_scalar_dense%') THEN 'host_sync'
                   WHEN kind IN ('host_api', 'framework_op') AND (name ILIKE '%compile%' OR name ILIKE '%BuildOp%')
                        THEN 'compile'
                   WHEN kind IN ('host_api', 'framework_op') AND (name ILIKE '%malloc%' OR name ILIKE '%MemAlloc%')
                        THEN 'memory_alloc'
                   WHEN kind = 'device_task' AND (coalesce(task_type, name) ILIKE '%EVENT_WAIT%'
                        OR coalesce(task_type, name) ILIKE '%Notify Wait%') THEN 'stream_wait'
                   WHEN kind = 'log' AND category IN ('memory_alloc', 'compile', 'host_setup') THEN category
               END AS cause
        FROM timeline
        WHERE kind IN ('host_api', 'framework_op', 'device_task', 'log')
          AND start_ns IS NOT NULL AND end_ns IS NOT NULL) AS e
    WHERE cause IS NOT NULL),
keyed AS (
    SELECT e.event_row, e.is_task, e.cause, e.start_ns, e.end_ns, k.key_no
    FROM events AS e JOIN gap_keys AS k ON e.run_id = k.run_id AND e.device_id = k.device_id
    UNION ALL
    SELECT e.event_row, e.is_task, e.cause, e.start_ns, e.end_ns, k.key_no
    FROM events AS e JOIN gap_keys AS k ON e.run_id = k.run_id WHERE e.device_id IS NOT NULL AND k.device_id IS NULL
    UNION ALL
    SELECT e.event_row, e.is_task, e.cause, e.start_ns, e.end_ns, k.key_no
    FROM events AS e JOIN gap_keys AS k ON e.run_id = k.run_id WHERE e.device_id IS NULL),
-- The last gap starting before the event ends, carried along: the one gap a host event can explain.
last_gap AS (
    SELECT e.*, g.gap_row, g.start_ns AS gap_start_ns, g.end_ns AS gap_end_ns, g.gap_us
    FROM keyed AS e ASOF JOIN gaps AS g ON e.key_no = g.key_no AND e.end_ns > g.start_ns),
-- A device task and every gap from the first one ending after it starts to that last one, by their numbers
-- in time order. Only the gaps of devices with such tasks are numbered (an export often has none).
numbered AS (
    SELECT key_no, gap_row, start_ns, end_ns, row_number() OVER (PARTITION BY key_no ORDER BY start_ns) AS gap_no
    FROM gaps WHERE key_no IN (SELECT key_no FROM last_gap WHERE is_task)),
task_spans AS (
    SELECT e.event_row, e.cause, e.start_ns, e.end_ns, e.key_no, f.gap_no AS first_no, l.gap_no AS last_no
    FROM (SELECT * FROM last_gap WHERE is_task) AS e
    ASOF JOIN numbered AS f ON e.key_no = f.key_no AND e.start_ns < f.end_ns
    JOIN numbered AS l ON e.key_no = l.key_no AND e.gap_start_ns = l.start_ns),
task_pairs AS (
    SELECT s.event_row, s.cause, (least(s.end_ns, g.end_ns) - greatest(s.start_ns, g.start_ns)) / 1000.0 AS overlap_us,
           g.gap_row
    FROM (SELECT *, unnest(range(first_no, last_no + 1)) AS gap_no FROM task_spans WHERE first_no <= last_no) AS s
    JOIN numbered AS g ON s.key_no = g.key_no AND s.gap_no = g.gap_no),
-- A host event explains a gap only where it explains the device's idleness, the same in every layout:
-- the gap lasts until the event is over (a synchronize waiting while queued work runs spans gaps the
-- device closes by itself, before the call returns), and it is longer than the device's own 1-2 us
-- switch between two queued tasks (the chip table's task_switch_us).
host_pairs AS (
    SELECT p.event_row, p.cause,
           (least(p.end_ns, p.gap_end_ns) - greatest(p.start_ns, p.gap_start_ns)) / 1000.0 AS overlap_us, p.gap_row
    FROM last_gap AS p JOIN gap_keys AS k ON p.key_no = k.key_no
    WHERE NOT p.is_task AND p.start_ns < p.gap_end_ns AND p.end_ns <= p.gap_end_ns AND p.gap_us > k.task_switch_us),
found AS (
    SELECT * FROM host_pairs
    UNION ALL
    SELECT * FROM task_pairs)
SELECT f.cause, e.name AS event_name, f.overlap_us, f.gap_row
FROM found AS f JOIN timeline AS e ON f.event_row = e.rowid;

-- @table _gap_cause_top
-- @internal
-- Per device gap, the cause whose event overlaps it longest; gaps with no classified event are absent. A gap is
-- its row of _device_gaps (one integer to group on and join on, not its run, device and start).
-- @column gap_row      BIGINT   the gap's rowid in _device_gaps
-- @column cause        VARCHAR  the cause of that event (_gap_causes)
-- @column event_name   VARCHAR  the event overlapping the gap longest
-- @column overlap_us   DOUBLE   its time inside the gap, in microseconds
-- Events overlapping a gap equally long are told apart by cause, then name, so both columns name one event:
-- the greatest (overlap, cause, name) of the gap, one aggregate where an arg_max per column would be three.
-- Only the gaps with several events are aggregated: a gap's only event is its top one as it is. Comparing
-- STRUCTs in a hash aggregate costs far more than counting integers, and in many exports most gaps hold one
-- event (msprof's host synchronize before every task).
WITH several AS (SELECT gap_row FROM _gap_causes GROUP BY gap_row HAVING count(*) > 1)
SELECT c.gap_row, c.cause, c.event_name, c.overlap_us FROM _gap_causes AS c ANTI JOIN several AS s ON s.gap_row = c.gap_row
UNION ALL
SELECT gap_row, top.cause, top.event_name, top.overlap_us
FROM (SELECT c.gap_row, max({ 'overlap_us': c.overlap_us, 'cause': c.cause, 'event_name': c.event_name }) AS top
      FROM _gap_causes AS c SEMI JOIN several AS s ON s.gap_row = c.gap_row GROUP BY c.gap_row) AS t;

-- @table _classified_gaps
-- Every device gap with its main cause.
-- @column _device_gaps.*          the columns of _device_gaps
-- @column cause          VARCHAR  'host_sync', 'compile', 'memory_alloc', 'stream_wait', 'host_setup' (_gap_causes), or
--                                 'unattributed' when the timeline shows nothing inside the gap
-- @column cause_event    VARCHAR  the event behind the cause (NULL when unattributed)
SELECT g.*, coalesce(c.cause, 'unattributed') AS cause, c.event_name AS cause_event
FROM _device_gaps g LEFT JOIN _gap_cause_top c ON c.gap_row = g.rowid;
