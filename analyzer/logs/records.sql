-- The lines of one batch of log files, split into records by DuckDB (no Python per line). Read by
-- analyzer/logs/reader.py, statement by statement (separated by lines holding only ';').
-- Header forms:
--   cann     [LEVEL] MODULE(pid,process):YYYY-MM-DD-HH:MM:SS.mmm.uuu [file:line]rest   (plog, device logs)
--   install  [Module] [YYYY-MM-DD hh:mm:ss] [LEVEL]rest                                (ascend_install.log)
--   driver   [YYYY-MM-DD-HH:MM:SS.uuuuuu] [ascend] [module] [LEVEL] rest               (host_kernel.log)
--   slogd    YYYY-MM-DD hh:mm:ss.mmm[LEVEL] file:line: rest                             (slogdlog)
-- Any other line continues the record above it in its file, or, before the first record, is unparsed.
-- A header is recognised by one regular expression without captures (DuckDB runs it as a DFA); the
-- cann form, nearly every line, is then cut with string functions, the rare others with captures.

CREATE OR REPLACE TEMP TABLE _log_lines (file_id INTEGER, line_no BIGINT, line VARCHAR, form VARCHAR)
;
-- Per file ($path, $file_id): read_csv of one column (no quoting, no detection) is DuckDB's fast line
-- reader; it keeps blank lines (NULL) and the file's order, so the row number in the scan is the line's.
INSERT INTO _log_lines
WITH raw_lines AS (SELECT $file_id AS file_id, row_number() OVER () AS line_no, line
                   FROM read_csv($path, columns = { 'line': 'VARCHAR' }, delim = chr(1), quote = '', escape = '',
                                 header = FALSE, auto_detect = FALSE, max_line_size = 67108864))
SELECT file_id, line_no, line,
       CASE WHEN regexp_matches(line, '^\[[A-Z]+\] [^\s(]+\(-?\d+,[^)]*\):\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3}\.\d{3}')
                 THEN 'cann'
            WHEN regexp_matches(line, '^\[\w+\] \[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] \[[A-Z]+\]') THEN 'install'
            WHEN regexp_matches(line, '^\[\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{6}\] \[\w+\] \[[\w\-]+\] \[[A-Z]+\]') THEN 'driver'
            WHEN regexp_matches(line, '^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\[[A-Z]+\]') THEN 'slogd'
       END AS form
FROM raw_lines WHERE line IS NOT NULL AND line <> ''
;
CREATE OR REPLACE TEMP TABLE _log_tails AS
WITH tail_lines AS (SELECT file_id, line_no, line FROM _log_lines WHERE form IS NULL),
head_lines AS (SELECT file_id, line_no FROM _log_lines WHERE form IS NOT NULL)
SELECT n.file_id, h.line_no AS head_line_no, n.line_no, n.line
FROM tail_lines n ASOF LEFT JOIN head_lines h ON h.file_id = n.file_id AND n.line_no > h.line_no
;
INSERT INTO log_files BY NAME
WITH line_counts AS (SELECT file_id, count(*) AS n, count(form) AS heads FROM _log_lines GROUP BY file_id),
unparsed_counts AS (SELECT file_id, count(*) AS n FROM _log_tails WHERE head_line_no IS NULL GROUP BY file_id)
SELECT $run_id AS run_id, f.file_id, f.rel AS path, f.layout, f.log_kind, f.collection, f.rank_id, f.node_id,
       f.device_id, f.name_pid, f.size_bytes, coalesce(lc.n, 0) AS line_count, coalesce(lc.heads, 0) AS record_count,
       coalesce(uc.n, 0) AS unparsed_line_count, f.skipped
FROM _log_batch f LEFT JOIN line_counts lc USING (file_id) LEFT JOIN unparsed_counts uc USING (file_id)
;
INSERT INTO log_events BY NAME
WITH cann_lines AS (
    SELECT file_id, line_no, line, strpos(line, ']') AS b1, strpos(line, '(') AS p1, strpos(line, '):') AS p2
    FROM _log_lines WHERE form = 'cann'),
cann_split AS (
    SELECT *, substr(line, p2 + 29) AS after, substr(line, p1 + 1, p2 - p1 - 1) AS inside FROM cann_lines),
cann_sourced AS (
    SELECT *, CASE WHEN starts_with(after, ' [') AND strpos(after, ']') > 0
                        AND contains(substr(after, 3, strpos(after, ']') - 3), ':')
                   THEN substr(after, 3, strpos(after, ']') - 3) END AS src
    FROM cann_split),
cann AS (
    SELECT file_id, line_no, substr(line, 2, b1 - 2) AS level, substr(line, b1 + 2, p1 - b1 - 2) AS module,
           try_cast(split_part(inside, ',', 1) AS BIGINT) AS pid, substr(inside, strpos(inside, ',') + 1) AS process,
           try_strptime(substr(line, p2 + 2, 23) || substr(line, p2 + 26, 3), '%Y-%m-%d-%H:%M:%S.%f') AS wall_time,
           split_part(src, ':', 1) AS src_file, try_cast(split_part(src, ':', 2) AS INTEGER) AS src_line,
           CASE WHEN src IS NULL THEN ltrim(after) ELSE substr(after, strpos(after, ']') + 1) END AS rest
    FROM cann_sourced),
other_forms AS (
    SELECT file_id, line_no, form,
           regexp_extract(line, '^\[(\w+)\] \[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] \[([A-Z]+)\] ?(.*)$',
                          ['module', 't', 'level', 'rest']) AS i,
           regexp_extract(line, '^\[(\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{6})\] \[\w+\] \[([\w\-]+)\] \[([A-Z]+)\] ?(.*)$',
                          ['t', 'module', 'level', 'rest']) AS k,
           regexp_extract(line, '^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\[([A-Z]+)\] ?(?:([^\s:]+):(\d+): )?(.*)$',
                          ['t', 'level', 'src_file', 'src_line', 'rest']) AS s
    FROM _log_lines WHERE form IN ('install', 'driver', 'slogd')),
heads AS (SELECT * FROM cann
UNION ALL
SELECT file_id, line_no,
       CASE form WHEN 'install' THEN i.level WHEN 'driver' THEN k.level ELSE s.level END AS level,
       CASE form WHEN 'install' THEN i.module WHEN 'driver' THEN k.module ELSE 'SLOGD' END AS module,
       NULL AS pid, NULL AS process,
       CASE form WHEN 'install' THEN try_strptime(i.t, '%Y-%m-%d %H:%M:%S')
                 WHEN 'driver' THEN try_strptime(k.t, '%Y-%m-%d-%H:%M:%S.%f')
                 ELSE try_strptime(s.t || '000', '%Y-%m-%d %H:%M:%S.%f') END AS wall_time,
       CASE WHEN form = 'slogd' THEN nullif(s.src_file, '') END AS src_file,
       CASE WHEN form = 'slogd' THEN try_cast(nullif(s.src_line, '') AS INTEGER) END AS src_line,
       CASE form WHEN 'install' THEN i.rest WHEN 'driver' THEN k.rest ELSE s.rest END AS rest
FROM other_forms),
records AS (SELECT h.*, h.rest AS message, f.rank_id AS folder_rank, h.level IN ('WARNING', 'ERROR', 'CRITICAL') AS judged
            FROM heads h JOIN _log_batch f ON f.file_id = h.file_id),
keyed_records AS (SELECT *, CASE WHEN judged AND regexp_matches(message, $any_error) THEN {error_match} END AS k_idx FROM records)
SELECT $run_id AS run_id, e.file_id, e.line_no, e.folder_rank AS rank_id, e.level, e.module, e.pid, e.process, e.wall_time,
       e.src_file, e.src_line, e.message, 0 AS continuation_count,
       coalesce(try_cast(split_part(ltrim(e.rest), ' ', 1) AS BIGINT),
                CASE WHEN contains(e.rest, 'tid:') THEN try_cast(regexp_extract(e.rest, 'tid:\s*(\d+)', 1) AS BIGINT) END)
           AS thread_id,
       CASE WHEN judged THEN nullif(regexp_extract(message, 'fault kernel_name=([^,\s]+)', 1), '') END AS kernel_name,
       CASE WHEN judged THEN try_cast(coalesce(nullif(regexp_extract(message, 'device_id=(\d+)', 1), ''),
                                               nullif(regexp_extract(message, 'device\((?:chipId:)?(\d+)', 1), ''))
                                      AS INTEGER) END AS device_id,
       CASE WHEN judged THEN try_cast(nullif(regexp_extract(message, 'stream_id=(\d+)', 1), '') AS INTEGER) END AS stream_id,
       CASE WHEN judged THEN try_cast(nullif(regexp_extract(message, 'task_id=(\d+)', 1), '') AS BIGINT) END AS task_id,
       CASE WHEN judged THEN nullif(regexp_extract(message, 'dump exception to file, file: ?(\S+)', 1), '') END AS dump_path,
       CASE WHEN NOT $with_activity OR NOT regexp_matches(message, $any_activity) THEN NULL
            WHEN regexp_matches(message, $memory_alloc) THEN 'memory_alloc'
            WHEN regexp_matches(message, $compile) THEN 'compile'
            WHEN regexp_matches(message, $host_setup) THEN 'host_setup' END AS host_activity,
       k.code AS error_code, k.kind AS error_kind, k.priority AS error_priority, k.meaning AS error_meaning,
       k.advice AS error_advice
FROM keyed_records e LEFT JOIN _log_knowledge k ON k.idx = e.k_idx
;
-- Continuation lines join their record's message (fields were read from the header line).
UPDATE log_events SET message = log_events.message || chr(10) || t.text, continuation_count = t.n
FROM (SELECT file_id, head_line_no, string_agg(line, chr(10) ORDER BY line_no) AS text, count(*)::INTEGER AS n
      FROM _log_tails WHERE head_line_no IS NOT NULL GROUP BY ALL) t
WHERE log_events.run_id = $run_id AND log_events.file_id = t.file_id AND log_events.line_no = t.head_line_no
