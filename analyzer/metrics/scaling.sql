-- The batch-size scaling table and verdict, over catalog-shaped tables (catalog_runs, run_metrics and
-- run_model_identity: analyzer/metrics/model_identity.py). `npu-triage sweep` creates them over a
-- catalog, and the rule judging batch-size scaling over the runs it compares, so that both agree.
-- The verdict's thresholds are the variables min_rise and min_rise_factor (SET VARIABLE).

-- @view batch_size_scaling
-- One row per run of a model at a batch size, with its busy ratio (THE busy ratio: run_metrics, the
-- helper view _run_busy), latency and throughput. Runs are grouped by model identity, never by name or
-- folder alone: runs of another model under the same name (another depth, other shapes) never join.
-- @column model_name                VARCHAR  the run's model label (model identity), else its model name
-- @column batch_size                INTEGER  the run's batch size
-- @column run_id                    VARCHAR  the run
-- @column cann_version              VARCHAR  its CANN version
-- @column busy_ratio                DOUBLE   run_metrics.busy_ratio: the time breakdown's computing share
-- @column step_time_us              DOUBLE   median step time, else the run's span
-- @column per_sample_us             DOUBLE   step_time_us / batch_size
-- @column throughput_samples_per_s  DOUBLE   batch_size per second of step time
SELECT coalesce(i.model_label, r.model_name) AS model_name, r.batch_size, r.run_id, r.cann_version, m.busy_ratio,
       coalesce(m.step_time_p50_us, m.span_us) AS step_time_us,
       coalesce(m.step_time_p50_us, m.span_us) / r.batch_size AS per_sample_us,
       r.batch_size / (coalesce(m.step_time_p50_us, m.span_us) / 1e6) AS throughput_samples_per_s
FROM catalog_runs r JOIN run_metrics m USING (run_id) LEFT JOIN run_model_identity i USING (run_id)
WHERE r.batch_size IS NOT NULL AND r.batch_size > 0 AND coalesce(m.step_time_p50_us, m.span_us) > 0;

-- @view batch_size_scaling_verdict
-- Per model, whether the busy ratio rises with batch size: by at least min_rise (absolute) or by the
-- factor min_rise_factor, small batches leave the device waiting on the host (scheduling overhead);
-- flat, the time is spent inside the operators.
-- @column model_name         VARCHAR  the model ('' when unnamed)
-- @column run_count          BIGINT   its runs
-- @column min_batch_size     INTEGER  its smallest batch size
-- @column max_batch_size     INTEGER  its largest batch size
-- @column busy_ratio_at_min  DOUBLE   busy ratio at the smallest batch size
-- @column busy_ratio_at_max  DOUBLE   busy ratio at the largest batch size
-- @column busy_ratio_rise    DOUBLE   busy_ratio_at_max - busy_ratio_at_min
-- @column verdict            VARCHAR  'scheduling_overhead', 'inside_operators' or 'not_enough_batch_sizes'
SELECT coalesce(model_name, '') AS model_name, count(*) AS run_count,
       min(batch_size) AS min_batch_size, max(batch_size) AS max_batch_size,
       arg_min(busy_ratio, batch_size) AS busy_ratio_at_min, arg_max(busy_ratio, batch_size) AS busy_ratio_at_max,
       arg_max(busy_ratio, batch_size) - arg_min(busy_ratio, batch_size) AS busy_ratio_rise,
       CASE WHEN count(DISTINCT batch_size) < 2 THEN 'not_enough_batch_sizes'
            WHEN arg_max(busy_ratio, batch_size) - arg_min(busy_ratio, batch_size) >= getvariable('min_rise')
              OR arg_max(busy_ratio, batch_size) >= getvariable('min_rise_factor') * arg_min(busy_ratio, batch_size)
            THEN 'scheduling_overhead' ELSE 'inside_operators' END AS verdict
FROM batch_size_scaling GROUP BY ALL ORDER BY model_name;
