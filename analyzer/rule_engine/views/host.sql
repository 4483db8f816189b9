-- What the host did, from the timeline's host API events.

-- @table _host_api_calls
-- Host API events of the timeline per run: how many launches and runtime calls the host made, when the
-- timeline has them.
-- @column run_id  VARCHAR  the run
-- @column calls   BIGINT   host API events
-- @column host_us DOUBLE   their summed duration, in microseconds
SELECT run_id, count(*) AS calls, sum(end_ns - start_ns) / 1000.0 AS host_us FROM timeline
WHERE kind = 'host_api' AND start_ns IS NOT NULL AND end_ns IS NOT NULL GROUP BY run_id;
