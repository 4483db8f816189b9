-- Communication against computation: how much communication time no compute task hid.

-- @table _comm_exposed
-- Communication tasks per run and device, and how much of their time no compute task hid.
-- @column run_id                 VARCHAR  the run
-- @column device_id              INTEGER  the device
-- @column comm_us                DOUBLE   length of the union of communication intervals (_comm_intervals), in us
-- @column overlapped_us          DOUBLE   of it, time some compute task also ran (_busy_intervals), in us
-- @column comm_not_overlapped_us DOUBLE   comm_us - overlapped_us: communication the device waited on
WITH comm AS (SELECT run_id, device_id, sum(end_ns - start_ns) / 1000.0 AS comm_us FROM _comm_intervals
              GROUP BY run_id, device_id),
overlap AS (SELECT c.run_id, c.device_id,
                   sum(least(c.end_ns, b.end_ns) - greatest(c.start_ns, b.start_ns)) / 1000.0 AS overlapped_us
            FROM _comm_intervals c JOIN _busy_intervals b ON b.run_id = c.run_id
                 AND b.device_id IS NOT DISTINCT FROM c.device_id AND b.start_ns < c.end_ns AND b.end_ns > c.start_ns
            GROUP BY c.run_id, c.device_id)
SELECT c.run_id, c.device_id, c.comm_us, coalesce(o.overlapped_us, 0) AS overlapped_us,
       c.comm_us - coalesce(o.overlapped_us, 0) AS comm_not_overlapped_us
FROM comm c LEFT JOIN overlap o ON o.run_id = c.run_id AND o.device_id IS NOT DISTINCT FROM c.device_id;
