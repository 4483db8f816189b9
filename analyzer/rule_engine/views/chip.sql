-- The nominal values of each run's chip. They come from the chip table of
-- analyzer/rule_engine/chip_table.toml (read by chip_table.py) with the --set chip.KEY=VALUE overrides applied, which create_views
-- writes into the TEMP table _chip_table (chip, one DOUBLE column per nominal key, is_default: the chip
-- assumed when a run names none, ai_core_count_set: ai_core_count was overridden).

-- @table _run_nominal
-- Per run, the nominal values of its chip: the chip table's row whose name is the longest prefix of the
-- chip the run names, else the default chip. A run's own runs.ai_core_count wins over the table's,
-- unless --set chip.ai_core_count overrides both.
-- @column run_id           VARCHAR  the run (every run of runs, and the runs only ops names)
-- @column chip             VARCHAR  the chip table's row used
-- @column chip_assumed     BOOLEAN  the run names no chip, or another name than the row's
-- @column ai_core_count    INTEGER  AI Cores (cube cores) of the chip
-- @column aicore_mhz       DOUBLE   nominal AI Core clock, MHz
-- @column hbm_gb_per_s     DOUBLE   HBM bandwidth, read + write, GB/s
-- @column hccs_gb_per_s    DOUBLE   on-board chip-to-chip link (HCCS) bandwidth, all links, GB/s
-- @column roce_gb_per_s    DOUBLE   network (RoCE) bandwidth per chip, GB/s
-- @column launch_us        DOUBLE   typical host cost of launching one operator (dispatch, in eager mode), us
-- @column gap_threshold_us DOUBLE   device gaps at least this long are 'long gaps'; shorter ones are launch gaps
-- @column task_switch_us   DOUBLE   idle time the device itself needs between two tasks, us
-- @column device_memory_gb DOUBLE   on-chip device memory (HBM, or LPDDR on the 310P) a run can use, GB
-- @column cube_tflops      DOUBLE   cube (matrix) peak at FP16, TFLOPS: the roofline's compute ceiling
WITH run_chips AS (SELECT run_id, chip, ai_core_count FROM runs  -- and the runs only ops names (a database filled table by table)
                   UNION ALL
                   SELECT DISTINCT run_id, NULL, NULL FROM ops WHERE run_id NOT IN (SELECT run_id FROM runs)),
matched AS (SELECT r.run_id, any_value(r.chip) AS run_chip, any_value(r.ai_core_count) AS ai_core_count,
                   coalesce(arg_max(t.chip, length(t.chip)), (SELECT chip FROM _chip_table WHERE is_default)) AS chip
            FROM run_chips r LEFT JOIN _chip_table t ON starts_with(lower(r.chip), lower(t.chip))
            GROUP BY r.run_id)
SELECT m.run_id, m.chip, m.run_chip IS NULL OR m.run_chip <> m.chip AS chip_assumed,
       CASE WHEN c.ai_core_count_set THEN c.ai_core_count::INTEGER
            ELSE coalesce(m.ai_core_count, c.ai_core_count::INTEGER) END AS ai_core_count,
       c.* EXCLUDE (chip, ai_core_count, is_default, ai_core_count_set)
FROM matched m JOIN _chip_table c ON c.chip = m.chip;
