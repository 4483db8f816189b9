-- The operator whose task failed: the logs' error records that name a device task, joined to the profile's ops
-- (diagnose --logs, and logs found beside an export). Created by analyzer/logs/links.py when logs are attached.

-- @view _log_task_errors
-- The error records of each log collection's run (from its first host record on, as the rules of the logs read them) that
-- name a device task (stream_id and task_id), one row per (collection, rank, stream, task) with a fault among
-- them (an error the knowledge calls a fault or a resource failure, or a record naming the faulting kernel):
-- a task only waited on (Task Wait, stream sync) is not a failed task.
-- @column log_run_id   the log collection (log_events.run_id)
-- @column rank_id      rank of the records, NULL outside a job
-- @column device_id    device the records name (the smallest), NULL when none does
-- @column stream_id    stream of the failed task
-- @column task_id      task id of the failed task
-- @column kernel_name  fault kernel_name= of the records, NULL when none names it
-- @column error_code   the most specific code of the records (log_events.error_code)
-- @column meaning      its meaning (error knowledge)
-- @column advice       its advice
-- @column first_time   the first record's wall time (log clock)
-- @column pid          its process
-- @column file         its file, relative to the log folder
-- @column line_no      its line
-- @column record_count the error records naming the task
-- @column records      file:line of those records (the first 10)
-- @column dump_path    the exception dump the same process wrote within 60 s after the first record, else NULL
WITH run AS (SELECT run_id, coalesce(min(first_time) FILTER (WHERE host_process), min(first_time)) AS start
             FROM log_processes WHERE in_run GROUP BY run_id),
err AS (SELECT e.*, f.path AS file FROM log_events e JOIN log_files f USING (run_id, file_id)
        LEFT JOIN run ON run.run_id = e.run_id
        WHERE e.level IN ('ERROR', 'CRITICAL') AND e.stream_id IS NOT NULL AND e.task_id IS NOT NULL
          AND e.wall_time >= coalesce(run.start, TIMESTAMP '2000-01-01')),
task AS (SELECT run_id AS log_run_id, rank_id, min(device_id) AS device_id, stream_id, task_id,
                min(kernel_name) AS kernel_name,
                arg_max(error_code, (error_priority, -epoch_us(wall_time), -line_no)) FILTER (WHERE error_code IS NOT NULL) AS error_code,
                arg_max(error_meaning, (error_priority, -epoch_us(wall_time), -line_no)) FILTER (WHERE error_code IS NOT NULL) AS meaning,
                arg_max(error_advice, (error_priority, -epoch_us(wall_time), -line_no)) FILTER (WHERE error_code IS NOT NULL) AS advice,
                min(wall_time) AS first_time, arg_min(pid, (wall_time, file_id, line_no)) AS pid,
                arg_min(file, (wall_time, file_id, line_no)) AS file, arg_min(line_no, (wall_time, file_id, line_no)) AS line_no,
                count(*) AS record_count,
                list(file || ':' || line_no ORDER BY wall_time, file_id, line_no)[1:10] AS records
         FROM err GROUP BY run_id, rank_id, stream_id, task_id
         HAVING bool_or(error_kind IN ('fault', 'resource') OR kernel_name IS NOT NULL))
SELECT t.*, (SELECT arg_min(d.dump_path, (d.wall_time, d.line_no)) FROM log_events d
             WHERE d.run_id = t.log_run_id AND d.pid IS NOT DISTINCT FROM t.pid AND d.dump_path IS NOT NULL
               AND d.wall_time BETWEEN t.first_time AND t.first_time + INTERVAL 60 SECOND) AS dump_path
FROM task t;

-- @view _log_failed_ops
-- Per profiled run the logs are attached to (_log_attach), the operator of each failed task of
-- _log_task_errors: the ops row of the same stream and task id (and device and rank, when both sides know
-- them), else, when the records name the faulting kernel, an ops row whose type begins the kernel's name.
-- Task ids wrap, so of several such rows the one nearest before the first error record (log clock converted
-- with the attachment's UTC offset) is taken, preferring a type that begins the kernel's name.
-- @column run_id         the profiled run
-- @column matched_by     'task' (stream and task id) or 'kernel' (the kernel's name only)
-- @column op_name        the operator (ops.op_name)
-- @column op_type        its type
-- @column task_type      its core type
-- @column input_shapes   its input shapes
-- @column output_shapes  its output shapes
-- @column dur_us         the failed task's device time
-- @column op_start_ns    the task's start
-- @column op_device_id   the task's device
-- @column _log_task_errors.*  the failed task's error records
WITH cand AS (
    SELECT a.run_id, CASE WHEN o.stream_id = t.stream_id AND o.task_id = t.task_id THEN 'task' ELSE 'kernel' END
               AS matched_by,
           o.op_name, o.op_type, o.task_type, o.input_shapes, o.output_shapes, o.dur_us, o.start_ns AS op_start_ns,
           o.device_id AS op_device_id, t.*,
           row_number() OVER (
               PARTITION BY a.run_id, t.log_run_id, t.rank_id, t.stream_id, t.task_id
               ORDER BY o.stream_id = t.stream_id AND o.task_id = t.task_id DESC,
                        coalesce(starts_with(t.kernel_name, o.op_type), FALSE) DESC,
                        o.start_ns <= (epoch_us(t.first_time) - a.offset_min::BIGINT * 60000000) * 1000 DESC,
                        abs(o.start_ns - (epoch_us(t.first_time) - a.offset_min::BIGINT * 60000000) * 1000), o.op_name
           ) AS k
    FROM _log_attach a
    JOIN _log_task_errors t ON t.log_run_id = a.log_run_id
    JOIN runs r ON r.run_id = a.run_id AND (r.rank_id IS NULL OR t.rank_id IS NULL OR r.rank_id = t.rank_id)
    JOIN ops o ON o.run_id = a.run_id
         AND (t.device_id IS NULL OR o.device_id IS NULL OR o.device_id = t.device_id)
         AND ((o.stream_id = t.stream_id AND o.task_id = t.task_id)
              OR (t.kernel_name IS NOT NULL AND o.op_type IS NOT NULL AND starts_with(t.kernel_name, o.op_type || '_')))
)
SELECT run_id, matched_by, op_name, op_type, task_type, input_shapes, output_shapes, dur_us, op_start_ns,
       op_device_id, log_run_id, rank_id, device_id, stream_id, task_id, kernel_name, error_code, meaning, advice,
       first_time, pid, file, line_no, record_count, records, dump_path
FROM cand WHERE k = 1;
