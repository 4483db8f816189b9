-- Device memory as the framework's caching allocator saw it (memory_records from memory_record /
-- MEMORY_RECORD, op_memory from operator_memory / OP_MEMORY), read by the memory rules and the report's
-- memory section and timeline.

-- @table _memory_total
-- Per run and device, the allocator's total over time: the memory_record component that holds the
-- whole framework ('PTA+GE' when the export writes it, else 'PTA', else 'GE', else the component with
-- the most samples that have an allocated value). APP (the process' reserved memory) has no allocated
-- value and is never the total.
-- @column run_id       VARCHAR  the run
-- @column device_id    INTEGER  the device; -1 when the export does not say
-- @column component    VARCHAR  the component chosen as the total
-- @column ts_ns        BIGINT   sample time
-- @column allocated_mb DOUBLE   memory handed out to tensors, MB
-- @column reserved_mb  DOUBLE   memory the allocator holds from the device (allocated + cached), MB
WITH rec AS (
    SELECT run_id, coalesce(device_id, -1) AS device_id, component, ts_ns, allocated_mb, reserved_mb
    FROM memory_records
    WHERE source = 'memory_record' AND allocated_mb IS NOT NULL AND ts_ns IS NOT NULL AND component IS NOT NULL
),
pick AS (
    SELECT run_id, device_id, component,
           row_number() OVER (PARTITION BY run_id, device_id ORDER BY
               CASE component WHEN 'PTA+GE' THEN 0 WHEN 'PTA' THEN 1 WHEN 'GE' THEN 2 ELSE 3 END,
               count(*) DESC, component) AS choice
    FROM rec GROUP BY run_id, device_id, component
)
SELECT r.run_id, r.device_id, r.component, r.ts_ns, r.allocated_mb, r.reserved_mb
FROM rec r JOIN pick p USING (run_id, device_id, component)
WHERE p.choice = 1;

-- @table _memory_peak
-- @empty_without memory_records
-- Per run and device, the peak of _memory_total and how it compares with the chip's memory
-- (_run_nominal.device_memory_gb). The peak allocated is the first sample reaching the maximum.
-- @column run_id                   VARCHAR  the run
-- @column device_id                INTEGER  the device; -1 when the export does not say
-- @column component                VARCHAR  the component of _memory_total
-- @column samples                  BIGINT   samples of the series
-- @column first_ns                 BIGINT   first sample
-- @column last_ns                  BIGINT   last sample
-- @column peak_allocated_mb        DOUBLE   largest allocated value, MB
-- @column peak_allocated_ns        BIGINT   first sample at peak_allocated_mb
-- @column reserved_at_peak_mb      DOUBLE   reserved value of that sample, MB
-- @column peak_reserved_mb         DOUBLE   largest reserved value, MB
-- @column peak_reserved_ns         BIGINT   first sample at peak_reserved_mb
-- @column allocated_at_reserved_mb DOUBLE   allocated value of that sample, MB
-- @column app_reserved_mb          DOUBLE   largest reserved value of the whole process (memory_record or npu_module_mem 'APP') inside the run's window of tasks and memory_record samples, MB; NULL when not written
-- @column device_memory_mb         DOUBLE   the chip's memory (chip table), MB
-- @column allocated_share          DOUBLE   peak_allocated_mb / device_memory_mb
-- @column reserved_share           DOUBLE   peak_reserved_mb / device_memory_mb
-- @column used_share               DOUBLE   the largest of peak_reserved_mb and app_reserved_mb, over device_memory_mb
WITH peaks AS (
    SELECT run_id, device_id, any_value(component) AS component, count(*) AS samples,
           min(ts_ns) AS first_ns, max(ts_ns) AS last_ns,
           max(allocated_mb) AS peak_allocated_mb, arg_min(ts_ns, (-allocated_mb, ts_ns)) AS peak_allocated_ns,
           arg_min(reserved_mb, (-allocated_mb, ts_ns)) AS reserved_at_peak_mb,
           max(reserved_mb) AS peak_reserved_mb, arg_min(ts_ns, (-reserved_mb, ts_ns)) AS peak_reserved_ns,
           arg_min(allocated_mb, (-reserved_mb, ts_ns)) AS allocated_at_reserved_mb
    FROM _memory_total GROUP BY run_id, device_id
),
-- an export folder can hold an npu_module_mem.csv of another session: an APP sample counts only inside
-- the window of the run's device tasks and memory_record samples
win AS (
    SELECT run_id, min(a) AS a, max(b) AS b FROM (
        SELECT run_id, start_ns AS a, end_ns AS b FROM ops WHERE start_ns IS NOT NULL AND end_ns IS NOT NULL
        UNION ALL
        SELECT run_id, ts_ns AS a, ts_ns AS b FROM memory_records WHERE source = 'memory_record' AND ts_ns IS NOT NULL
    ) GROUP BY run_id
),
app AS (
    SELECT r.run_id, coalesce(r.device_id, -1) AS device_id, max(r.reserved_mb) AS app_reserved_mb
    FROM memory_records r JOIN win w ON r.run_id = w.run_id AND r.ts_ns BETWEEN w.a AND w.b
    WHERE r.component = 'APP' AND r.reserved_mb >= 0 GROUP BY ALL
)
SELECT s.*, app.app_reserved_mb, n.device_memory_gb * 1024 AS device_memory_mb,
       s.peak_allocated_mb / (n.device_memory_gb * 1024) AS allocated_share,
       s.peak_reserved_mb / (n.device_memory_gb * 1024) AS reserved_share,
       greatest(s.peak_reserved_mb, coalesce(app.app_reserved_mb, 0)) / (n.device_memory_gb * 1024) AS used_share
FROM peaks s LEFT JOIN app USING (run_id, device_id) LEFT JOIN _run_nominal n USING (run_id);

-- @table _memory_at_peak
-- @empty_without memory_records, op_memory
-- The allocations of op_memory alive at each device's peak allocated sample (_memory_peak): allocated at or
-- before it, released after it or never in the window. Allocations of a device-less op_memory row count
-- for every device of the run.
-- @column run_id            VARCHAR  the run
-- @column device_id         INTEGER  the device of the peak; -1 when the export does not say
-- @column op_name           VARCHAR  operator that allocated
-- @column size_kb           DOUBLE   allocation size, KB
-- @column alloc_ns          BIGINT   allocation time
-- @column release_ns        BIGINT   release time; NULL when not released in the window
-- @column peak_allocated_ns BIGINT   the peak it is alive at
SELECT m.run_id, p.device_id, m.op_name, m.size_kb, m.alloc_ns, m.release_ns, p.peak_allocated_ns
FROM op_memory m JOIN _memory_peak p
    ON m.run_id = p.run_id AND (m.device_id IS NULL OR p.device_id = -1 OR m.device_id = p.device_id)
WHERE m.size_kb > 0 AND m.alloc_ns <= p.peak_allocated_ns
  AND (m.release_ns IS NULL OR m.release_ns > p.peak_allocated_ns);

-- @table _memory_steps
-- @empty_without memory_records, steps
-- Per step and device, the allocated memory of _memory_total inside the step's window: its floor (what
-- stays allocated through the step, the same point of every step) and its peak.
-- @column run_id           VARCHAR  the run
-- @column device_id        INTEGER  the device; -1 when the export does not say
-- @column step_id          BIGINT   the step
-- @column step_no          BIGINT   the step's rank in time order, 1..
-- @column start_ns         BIGINT   step start
-- @column end_ns           BIGINT   step end
-- @column samples          BIGINT   memory samples inside the step
-- @column floor_mb         DOUBLE   smallest allocated value inside the step, MB
-- @column peak_mb          DOUBLE   largest allocated value inside the step, MB
-- @column peak_reserved_mb DOUBLE   largest reserved value inside the step, MB
WITH step_windows AS (
    SELECT run_id, step_id, min(start_ns) AS start_ns, max(end_ns) AS end_ns FROM steps
    WHERE step_id IS NOT NULL AND start_ns IS NOT NULL AND end_ns > start_ns GROUP BY run_id, step_id
)
SELECT t.run_id, t.device_id, w.step_id, row_number() OVER (PARTITION BY t.run_id, t.device_id ORDER BY w.start_ns, w.step_id) AS step_no,
       w.start_ns, w.end_ns, count(*) AS samples, min(t.allocated_mb) AS floor_mb, max(t.allocated_mb) AS peak_mb,
       max(t.reserved_mb) AS peak_reserved_mb
FROM _memory_total t ASOF JOIN step_windows w ON t.run_id = w.run_id AND t.ts_ns >= w.start_ns  -- the step begun last, if not ended
WHERE t.ts_ns < w.end_ns
GROUP BY t.run_id, t.device_id, w.step_id, w.start_ns, w.end_ns;
