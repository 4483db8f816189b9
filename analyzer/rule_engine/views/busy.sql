-- THE definition of busy, read by the catalog (run_metrics), the sweep, the batch-size rule and the
-- run summary: the time breakdown's computing part over its whole span. Device time counts as busy
-- when some compute task runs (_busy_intervals: AI Core, AI Vector Core, MIX and AI CPU tasks, and
-- untyped kernels), inside the windows the breakdown covers (the steps, else the profiled span);
-- where the export decomposes its steps itself (torch_npu's step_trace_time), its own computing time.
-- Communication and other device tasks running alone are not busy.

-- @table _run_busy
-- The busy time of each run: _time_breakdown window 0 (all windows together), the diagnosis' summary
-- computing_us / computing_ratio.
-- @column run_id     VARCHAR  the run
-- @column span_us    DOUBLE   the analysed span: all steps together, else first task start .. last task end
-- @column busy_us    DOUBLE   busy time in microseconds (the breakdown's computing part)
-- @column busy_ratio DOUBLE   busy_us / span_us
SELECT run_id, span_us, computing_us AS busy_us, computing_us / nullif(span_us, 0) AS busy_ratio
FROM _time_breakdown WHERE window_no = 0;
