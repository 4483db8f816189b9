-- Over a job's aligned communication operations (job_comm_ops): what they cost each rank per job step.

-- @macro _job_rank_step_waits(ops)
-- Per rank, the time of `ops` (a relation with rank, step_id, group_name, op_name and us: rows of
-- job_comm_ops, `us` the part of each op that counts, NULL for an op that counts only towards the steps)
-- per job step: the sum of `us` in (step, group, op) order over the distinct steps of all of `ops`. The job
-- rules' [explains] queries read it: the wait a job cause costs each rank's own findings.
-- @column rank        INTEGER  the rank
-- @column us_per_step DOUBLE   its summed `us` over the steps of `ops`, in us; NULL when none of its rows counts
WITH steps AS (SELECT count(DISTINCT step_id) AS n FROM query_table(ops))
SELECT o.rank, sum(o.us ORDER BY o.step_id, o.group_name, o.op_name) / nullif(any_value(s.n), 0) AS us_per_step
FROM query_table(ops) o, steps s
GROUP BY o.rank;

-- @macro _rank_ranges(src)
-- Per `key` of `src` (a relation with key and rank), its distinct ranks as one text in rank order, each
-- run of consecutive ranks written as its ends ('0, 2-4, 7'), as the job's summary lines and problems write
-- them: a finding's subject naming a pipeline stage or a replica of hundreds of ranks stays one short line.
-- @column key   STRUCT   the key of `src` (of its type)
-- @column ranks VARCHAR  its ranks, e.g. '0, 2-4, 7'
WITH distinct_ranks AS (SELECT DISTINCT key, rank FROM query_table(src) WHERE rank IS NOT NULL),
numbered AS (SELECT key, rank, rank - row_number() OVER (PARTITION BY key ORDER BY rank) AS run FROM distinct_ranks),
runs AS (SELECT key, min(rank) AS first_rank, max(rank) AS last_rank FROM numbered GROUP BY key, run)
SELECT key, string_agg(CASE WHEN first_rank = last_rank THEN first_rank::VARCHAR ELSE first_rank || '-' || last_rank END,
                       ', ' ORDER BY first_rank) AS ranks
FROM runs GROUP BY key;
