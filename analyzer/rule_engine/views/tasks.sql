-- Device tasks by kind, the intervals when each kind ran, and the span each run is analysed over.
-- Intervals are half-open [start_ns, end_ns) in exact int64 nanoseconds; durations are DOUBLE
-- microseconds. "Device" means the pair (run_id, device_id): runs are split per device at ingest, so in
-- practice one run is one device.

-- @view _tasks
-- Every ops row with its operator family: THE definition of "the same operator" read by the rules
-- (a family's launches, time and subject) and the catalog (op_positions.op_name_norm, which diff aligns
-- on). A view, with every column of ops.
-- @column ops.*                 every column of ops (docs/schema.md)
-- @column op_name_norm VARCHAR  op_name without its numeric suffixes, each after a separator '_', '-', '.' or
--                               '/' and an optional 'op' ('MatMul_12' -> 'MatMul', 'Add.3' -> 'Add',
--                               'Cast_op4_1' -> 'Cast'); digits that end a name without a separator stay
--                               ('Conv2D1', 'MatMulV2')
-- @column op_family    VARCHAR  op_type [input shapes], or op_type [op_name_norm] when the task has no input
--                               shapes (NULL when op_type is)
SELECT *, regexp_replace(op_name, '([_\-./](op)?[0-9]+)+$', '') AS op_name_norm,
       op_type || ' [' || coalesce(nullif(input_shapes, ''), op_name_norm) || ']' AS op_family
FROM ops;

-- @view _compute_tasks
-- ops rows of compute task types (AI_CORE, AI_VECTOR_CORE, MIX_AIC, MIX_AIV, AI_CPU), and ops whose
-- task type is unknown (NULL, e.g. torch_npu Level0 writes 'N/A'): those are kernels too. A view (a
-- cheap filter), with every column of _tasks (ops' and the operator family).
-- @column _tasks.*  every column of ops (docs/schema.md), then op_name_norm and op_family (_tasks)
SELECT * FROM _tasks WHERE task_type IN ('AI_CORE', 'AI_VECTOR_CORE', 'MIX_AIC', 'MIX_AIV', 'AI_CPU') OR task_type IS NULL;

-- @view _comm_tasks
-- ops rows of communication tasks (task_type HCCL or COMMUNICATION). A view, with every column of ops.
-- @column ops.*  every column of ops (docs/schema.md)
SELECT * FROM ops WHERE task_type IN ('HCCL', 'COMMUNICATION');

-- @macro _device_intervals(tasks)
-- @internal
-- The intervals of `tasks` (a relation with run_id, device_id, start_ns, end_ns) merged into disjoint ones
-- per run and device (_intervals_merged).
-- @column run_id      VARCHAR  the run
-- @column device_id   INTEGER  the device
-- @column interval_no BIGINT   1.. in time order per run and device
-- @column start_ns    BIGINT   start of the interval
-- @column end_ns      BIGINT   end of the interval (exclusive)
-- @column dur_us      DOUBLE   its length in microseconds
-- @column task_count  BIGINT   rows of `tasks` merged into it
WITH src AS (  -- noqa: ST03
    SELECT { 'run_id': run_id, 'device_id': device_id } AS key, start_ns, end_ns FROM query_table(tasks))
SELECT m.key.run_id AS run_id, m.key.device_id AS device_id, m.interval_no, m.start_ns, m.end_ns, m.dur_us,
       m.task_count
FROM _intervals_merged(src) m;

-- @table _busy_intervals
-- Disjoint intervals when at least one compute task (_compute_tasks) ran, per run and device: the
-- intervals behind "busy" and the time breakdown's computing part.
-- @column run_id      VARCHAR  the run
-- @column device_id   INTEGER  the device
-- @column interval_no BIGINT   1.. in time order per run and device
-- @column start_ns    BIGINT   start of the interval
-- @column end_ns      BIGINT   end of the interval (exclusive)
-- @column dur_us      DOUBLE   its length in microseconds
-- @column task_count  BIGINT   compute tasks merged into it
SELECT * FROM _device_intervals(_compute_tasks);

-- @table _op_type_busy
-- Device time during which at least one compute task of an operator type ran (the union of that
-- type's intervals, so tasks overlapping on several streams count once).
-- @column run_id     VARCHAR  the run
-- @column device_id  INTEGER  the device
-- @column op_type    VARCHAR  the operator type (NULL for tasks without one)
-- @column busy_us    DOUBLE   length of the union of the type's task intervals, in microseconds
-- @column task_count HUGEINT  compute tasks of the type
WITH apart AS (  -- devices whose compute tasks never overlap or touch: a type's union is then its tasks' sum
    SELECT run_id, device_id FROM _busy_intervals GROUP BY ALL HAVING max(task_count) = 1),
src AS (  -- noqa: ST03
    SELECT { 'run_id': run_id, 'device_id': device_id, 'op_type': op_type } AS key, start_ns, end_ns
    FROM _compute_tasks AS t ANTI JOIN apart AS a ON a.run_id = t.run_id AND a.device_id IS NOT DISTINCT FROM t.device_id)
SELECT m.key.run_id AS run_id, m.key.device_id AS device_id, m.key.op_type AS op_type, m.busy_us, m.task_count
FROM _intervals_union_length(src) m
UNION ALL
SELECT t.run_id, t.device_id, t.op_type, sum(t.end_ns - t.start_ns) / 1000.0, sum(1)
FROM _compute_tasks AS t SEMI JOIN apart AS a ON a.run_id = t.run_id AND a.device_id IS NOT DISTINCT FROM t.device_id
WHERE t.start_ns IS NOT NULL AND t.end_ns IS NOT NULL AND t.end_ns >= t.start_ns
GROUP BY t.run_id, t.device_id, t.op_type;

-- @table _comm_intervals
-- @internal
-- Disjoint intervals when at least one communication task (_comm_tasks) ran, per run and device.
-- @column run_id      VARCHAR  the run
-- @column device_id   INTEGER  the device
-- @column interval_no BIGINT   1.. in time order per run and device
-- @column start_ns    BIGINT   start of the interval
-- @column end_ns      BIGINT   end of the interval (exclusive)
-- @column dur_us      DOUBLE   its length in microseconds
-- @column task_count  BIGINT   communication tasks merged into it
SELECT * FROM _device_intervals(_comm_tasks);

-- @table _active_intervals
-- @internal
-- Disjoint intervals when any device task (compute, communication or other) ran, per run and device.
-- @column run_id      VARCHAR  the run
-- @column device_id   INTEGER  the device
-- @column interval_no BIGINT   1.. in time order per run and device
-- @column start_ns    BIGINT   start of the interval
-- @column end_ns      BIGINT   end of the interval (exclusive)
-- @column dur_us      DOUBLE   its length in microseconds
-- @column task_count  BIGINT   device tasks merged into it
WITH mixed AS (  -- the devices that ran tasks other than compute; any other device's are its _busy_intervals
               SELECT run_id, device_id, count(*) AS tasks FROM ops GROUP BY ALL
               EXCEPT
               SELECT run_id, device_id, count(*) FROM _compute_tasks GROUP BY ALL),
mixed_ops AS (  -- noqa: ST03
    SELECT o.* FROM ops AS o SEMI JOIN mixed AS m ON m.run_id = o.run_id AND m.device_id IS NOT DISTINCT FROM o.device_id)
SELECT b.* FROM _busy_intervals AS b
ANTI JOIN mixed AS m ON m.run_id = b.run_id AND m.device_id IS NOT DISTINCT FROM b.device_id
UNION ALL
SELECT * FROM _device_intervals(mixed_ops);

-- @table _run_span
-- The analysed span of each run: the steps' window when the run has steps, else first task start ..
-- last task end.
-- @column run_id      VARCHAR  the run
-- @column start_ns    BIGINT   start of the span
-- @column end_ns      BIGINT   end of the span
-- @column span_us     DOUBLE   its length in microseconds
-- @column span_source VARCHAR  'steps' (the steps' window) or 'ops' (first to last device task)
SELECT run_id, min(start_ns) AS start_ns, max(end_ns) AS end_ns,
       (max(end_ns) - min(start_ns)) / 1000.0 AS span_us, 'steps' AS span_source
FROM steps WHERE start_ns IS NOT NULL AND end_ns IS NOT NULL GROUP BY run_id
UNION ALL
SELECT run_id, min(start_ns), max(end_ns), (max(end_ns) - min(start_ns)) / 1000.0, 'ops'
FROM ops WHERE run_id NOT IN (SELECT run_id FROM steps WHERE start_ns IS NOT NULL AND end_ns IS NOT NULL)
  AND start_ns IS NOT NULL GROUP BY run_id;
