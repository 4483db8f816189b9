-- One row per operator run of a comparison ($1: run_id), in execution order: its inputs' worst cosine, its
-- outputs' worst metrics, where the error of its worst output sits, and (with --profile) its device time.
WITH compared AS (SELECT * FROM tensor_compare WHERE run_id = $1),
ops AS (
    SELECT op_name, occurrence, min(exec_order) AS exec_order, min(op_type) AS op_type,
           min(cosine) FILTER (WHERE slot = 'input') AS input_cosine,
           min(cosine) FILTER (WHERE slot = 'output') AS output_cosine,
           max(max_abs_err) FILTER (WHERE slot = 'output') AS max_abs_err,
           max(mean_abs_err) FILTER (WHERE slot = 'output') AS mean_abs_err,
           max(max_rel_err) FILTER (WHERE slot = 'output') AS max_rel_err,
           max(rmse) FILTER (WHERE slot = 'output') AS rmse,
           max(rel_euclidean) FILTER (WHERE slot = 'output') AS rel_euclidean,
           sum(dump_nan_count + dump_inf_count) FILTER (WHERE slot = 'output') AS dump_nonfinite,
           sum(ref_nan_count + ref_inf_count) FILTER (WHERE slot = 'output') AS ref_nonfinite,
           arg_min(slot_index, (cosine, slot_index)) FILTER (WHERE slot = 'output') AS worst_output,
           arg_min(dtype, (cosine, slot_index)) FILTER (WHERE slot = 'output') AS dtype
    FROM compared GROUP BY op_name, occurrence
)
SELECT o.*, l.verdict, l.detail AS where_detail, p.device_time_us, p.launches, p.cube_ratio, p.vector_ratio,
       p.mte_ratio
FROM ops o
LEFT JOIN error_locations l ON l.run_id = $1 AND l.op_name = o.op_name AND l.occurrence = o.occurrence
     AND l.slot = 'output' AND l.slot_index = o.worst_output
LEFT JOIN profile_ops p ON p.run_id = $1 AND p.op_name = o.op_name
ORDER BY o.exec_order, o.op_name, o.occurrence
