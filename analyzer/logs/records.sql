-- The lines of one batch of log files, split into records by DuckDB (no Python per line). Read by
-- analyzer/logs/reader.py, statement by statement (separated by lines holding only ';').
-- Header forms:
--   cann     [LEVEL] MODULE(pid,process):YYYY-MM-DD-HH:MM:SS.mmm.uuu [file:line]rest   (plog, device logs)
--   install  [Module] [YYYY-MM-DD hh:mm:ss] [LEVEL]rest                                (ascend_install.log)
--   driver   [YYYY-MM-DD-HH:MM:SS.uuuuuu] [ascend] [module] [LEVEL] rest               (host_kernel.log)
--   slogd    YYYY-MM-DD hh:mm:ss.mmm[LEVEL] file:line: rest                             (slogdlog)
-- Any other line continues the record above it in its file, or, before the first record, is unparsed.

CREATE OR REPLACE TEMP TABLE _log_lines AS
WITH t AS (SELECT f.file_id, string_split(r.content, chr(10)) AS lines
           FROM read_text($paths) r JOIN _log_batch f ON f.path = r.filename)
SELECT file_id, unnest(range(1, len(lines) + 1)) AS line_no, rtrim(unnest(lines), chr(13)) AS line FROM t
;
CREATE OR REPLACE TEMP TABLE _log_heads AS
WITH c AS (
    SELECT file_id, line_no, line,
           CASE WHEN starts_with(line, '[') THEN regexp_extract(line,
               '^\[([A-Z]+)\] ([A-Za-z0-9_.\-]+)\((-?\d+),([^)]*)\):(\d{4}-\d\d-\d\d)-(\d\d:\d\d:\d\d)\.(\d{3})\.(\d{3}) ?(?:\[([^\]\s:]+):(\d+)\])?(.*)$',
               ['level', 'module', 'pid', 'process', 'd', 't', 'ms', 'us', 'src_file', 'src_line', 'rest']) END AS h
    FROM _log_lines WHERE line <> ''),
o AS (
    SELECT file_id, line_no, line, h,
           CASE WHEN coalesce(h.level, '') = '' AND regexp_matches(line, '^\[\w+\] \[\d{4}-')
                THEN regexp_extract(line, '^\[(\w+)\] \[(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)\] \[([A-Z]+)\] ?(.*)$',
                                    ['module', 'd', 't', 'level', 'rest']) END AS i,
           CASE WHEN coalesce(h.level, '') = '' AND regexp_matches(line, '^\[\d{4}-\d\d-\d\d-')
                THEN regexp_extract(line, '^\[(\d{4}-\d\d-\d\d)-(\d\d:\d\d:\d\d)\.(\d{6})\] \[\w+\] \[([\w\-]+)\] \[([A-Z]+)\] ?(.*)$',
                                    ['d', 't', 'us', 'module', 'level', 'rest']) END AS k,
           CASE WHEN coalesce(h.level, '') = '' AND regexp_matches(line, '^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\[')
                THEN regexp_extract(line, '^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)\.(\d{3})\[([A-Z]+)\] ?(?:([^\s:]+):(\d+): )?(.*)$',
                                    ['d', 't', 'ms', 'level', 'src_file', 'src_line', 'rest']) END AS s
    FROM c),
f AS (
    SELECT *, CASE WHEN coalesce(h.level, '') <> '' THEN 'cann' WHEN coalesce(i.level, '') <> '' THEN 'install'
                   WHEN coalesce(k.level, '') <> '' THEN 'driver' WHEN coalesce(s.level, '') <> '' THEN 'slogd' END AS form
    FROM o)
SELECT file_id, line_no, form,
       CASE form WHEN 'cann' THEN h.level WHEN 'install' THEN i.level WHEN 'driver' THEN k.level ELSE s.level END AS level,
       CASE form WHEN 'cann' THEN h.module WHEN 'install' THEN i.module WHEN 'driver' THEN k.module ELSE 'SLOGD' END AS module,
       CASE WHEN form = 'cann' THEN TRY_CAST(h.pid AS BIGINT) END AS pid,
       CASE WHEN form = 'cann' THEN h.process END AS process,
       CASE form WHEN 'cann' THEN try_strptime(h.d || ' ' || h.t || '.' || h.ms || h.us, '%Y-%m-%d %H:%M:%S.%f')
                 WHEN 'install' THEN try_strptime(i.d || ' ' || i.t, '%Y-%m-%d %H:%M:%S')
                 WHEN 'driver' THEN try_strptime(k.d || ' ' || k.t || '.' || k.us, '%Y-%m-%d %H:%M:%S.%f')
                 ELSE try_strptime(s.d || ' ' || s.t || '.' || s.ms || '000', '%Y-%m-%d %H:%M:%S.%f') END AS wall_time,
       CASE form WHEN 'cann' THEN nullif(h.src_file, '') WHEN 'slogd' THEN nullif(s.src_file, '') END AS src_file,
       CASE form WHEN 'cann' THEN TRY_CAST(nullif(h.src_line, '') AS INTEGER)
                 WHEN 'slogd' THEN TRY_CAST(nullif(s.src_line, '') AS INTEGER) END AS src_line,
       CASE form WHEN 'cann' THEN h.rest WHEN 'install' THEN i.rest WHEN 'driver' THEN k.rest ELSE s.rest END AS rest
FROM f
WHERE form IS NOT NULL
;
CREATE OR REPLACE TEMP TABLE _log_tails AS
WITH n AS (SELECT l.file_id, l.line_no, l.line FROM _log_lines l ANTI JOIN _log_heads h USING (file_id, line_no)
           WHERE l.line <> '')
SELECT n.file_id, h.line_no AS head_line_no, n.line_no, n.line
FROM n ASOF LEFT JOIN _log_heads h ON h.file_id = n.file_id AND n.line_no > h.line_no
;
INSERT INTO log_files BY NAME
WITH lc AS (SELECT file_id, count(*) AS n FROM _log_lines WHERE line <> '' GROUP BY file_id),
hc AS (SELECT file_id, count(*) AS n FROM _log_heads GROUP BY file_id),
uc AS (SELECT file_id, count(*) AS n FROM _log_tails WHERE head_line_no IS NULL GROUP BY file_id)
SELECT $run_id AS run_id, f.file_id, f.rel AS path, f.layout, f.log_kind, f.collection, f.rank_id, f.device_id,
       f.name_pid, f.size_bytes, coalesce(lc.n, 0) AS line_count, coalesce(hc.n, 0) AS record_count,
       coalesce(uc.n, 0) AS unparsed_line_count, NULL AS skipped
FROM _log_batch f LEFT JOIN lc USING (file_id) LEFT JOIN hc USING (file_id) LEFT JOIN uc USING (file_id)
;
CREATE OR REPLACE TEMP TABLE _log_records AS
WITH tail AS (SELECT file_id, head_line_no, string_agg(line, chr(10) ORDER BY line_no) AS text, count(*) AS n
              FROM _log_tails WHERE head_line_no IS NOT NULL GROUP BY ALL),
r AS (SELECT h.*, CASE WHEN t.text IS NULL THEN h.rest ELSE h.rest || chr(10) || t.text END AS message,
             coalesce(t.n, 0)::INTEGER AS continuation_count, f.rank_id AS folder_rank,
             h.level IN ('WARNING', 'ERROR', 'CRITICAL') AS judged
      FROM _log_heads h LEFT JOIN tail t ON t.file_id = h.file_id AND t.head_line_no = h.line_no
      JOIN _log_batch f ON f.file_id = h.file_id)
SELECT $run_id AS run_id, file_id, line_no, folder_rank AS rank_id, level, module, pid, process, wall_time, src_file,
       src_line, message, continuation_count, judged,
       TRY_CAST(coalesce(nullif(regexp_extract(rest, '^\s*(\d+)[\s\]]', 1), ''),
                         nullif(regexp_extract(rest, 'tid:\s*(\d+)', 1), '')) AS BIGINT) AS thread_id,
       CASE WHEN judged THEN nullif(regexp_extract(message, 'fault kernel_name=([^,\s]+)', 1), '') END AS kernel_name,
       CASE WHEN judged THEN TRY_CAST(coalesce(nullif(regexp_extract(message, 'device_id=(\d+)', 1), ''),
                                               nullif(regexp_extract(message, 'device\((?:chipId:)?(\d+)', 1), ''))
                                      AS INTEGER) END AS device_id,
       CASE WHEN judged THEN TRY_CAST(nullif(regexp_extract(message, 'stream_id=(\d+)', 1), '') AS INTEGER) END AS stream_id,
       CASE WHEN judged THEN TRY_CAST(nullif(regexp_extract(message, 'task_id=(\d+)', 1), '') AS BIGINT) END AS task_id,
       CASE WHEN judged THEN nullif(regexp_extract(message, 'dump exception to file, file: ?(\S+)', 1), '') END AS dump_path,
       CASE WHEN regexp_matches(message, $memory_alloc) THEN 'memory_alloc'
            WHEN regexp_matches(message, $compile) THEN 'compile'
            WHEN regexp_matches(message, $host_setup) THEN 'host_setup' END AS host_activity
FROM r
