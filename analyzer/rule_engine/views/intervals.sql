-- The interval algebra, written once: table macros over a relation of half-open [start_ns, end_ns)
-- intervals grouped by a `key` column (any type; the views pass a STRUCT of their key columns, e.g.
-- {'run_id': run_id, 'device_id': device_id}). Keys compare with IS NOT DISTINCT FROM, so a NULL
-- device is a key of its own. Each macro first numbers the distinct keys (`part`), so that its window
-- passes sort and partition integers only: a window keeps its whole partition in memory, and the
-- keys (run ids) would be most of it.

-- @macro _intervals_merged(src)
-- @internal
-- Merges the intervals of `src` (columns key, start_ns, end_ns; rows without a start, without an end
-- or ending before they start are left out) into disjoint ones per key. Gaps-and-islands in one sort:
-- a row opens a new island when it starts after the latest end of the rows sorted before it
-- (prev_end, a running max over the frame ending 1 PRECEDING). An island ends at the prev_end of the
-- next island's first row, the last one at its key's latest end; its task count is the distance
-- between the first rows' numbers. No GROUP BY over the rows, and the second window sorts only the
-- islands' first rows, by integer.
-- @column key         STRUCT  the key of src
-- @column interval_no BIGINT  1.. in time order per key
-- @column start_ns    BIGINT  start of the merged interval
-- @column end_ns      BIGINT  end of the merged interval (exclusive)
-- @column dur_us      DOUBLE  end_ns - start_ns in microseconds
-- @column task_count  BIGINT  rows of src merged into it
WITH tasks AS (SELECT key, start_ns, end_ns FROM query_table(src)
               WHERE start_ns IS NOT NULL AND end_ns IS NOT NULL AND end_ns >= start_ns),
keys AS (SELECT key, row_number() OVER (ORDER BY key) AS part FROM (SELECT DISTINCT key FROM tasks t)),
keyed AS (SELECT k.part, t.start_ns, t.end_ns FROM tasks t JOIN keys k ON t.key IS NOT DISTINCT FROM k.key),
running AS (SELECT part, start_ns, max(end_ns) OVER w AS prev_end, row_number() OVER w AS rn
            FROM keyed WINDOW w AS (PARTITION BY part ORDER BY start_ns, end_ns ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)),
tot AS (SELECT part, max(end_ns) AS last_end, count(*) AS task_rows FROM keyed GROUP BY part),
interval_starts AS (SELECT part, start_ns, rn, row_number() OVER f AS interval_no,
                           lead(prev_end) OVER f AS next_prev_end, lead(rn) OVER f AS next_rn
                    FROM running WHERE prev_end IS NULL OR start_ns > prev_end WINDOW f AS (PARTITION BY part ORDER BY rn)),
intervals AS (SELECT i.part, i.interval_no, i.start_ns, coalesce(i.next_prev_end, tot.last_end) AS end_ns,
                     coalesce(i.next_rn, tot.task_rows + 1) - i.rn AS task_count
              FROM interval_starts i JOIN tot USING (part))
SELECT k.key, e.interval_no, e.start_ns, e.end_ns, (e.end_ns - e.start_ns) / 1000.0 AS dur_us, e.task_count
FROM intervals e JOIN keys k USING (part);

-- @macro _intervals_union_length(src)
-- @internal
-- The length of the union of the intervals of `src` (columns key, start_ns, end_ns; invalid rows left
-- out as in _intervals_merged) per key, without building the merged intervals: each row adds what it
-- reaches past the latest end of the rows sorted before it. One sort.
-- @column key        STRUCT   the key of src
-- @column busy_us    DOUBLE   length of the union, in microseconds
-- @column task_count HUGEINT  rows of src counted
WITH tasks AS (SELECT key, start_ns, end_ns FROM query_table(src)
               WHERE start_ns IS NOT NULL AND end_ns IS NOT NULL AND end_ns >= start_ns),
keys AS (SELECT key, row_number() OVER (ORDER BY key) AS part FROM (SELECT DISTINCT key FROM tasks t)),
keyed AS (SELECT k.part, t.start_ns, t.end_ns FROM tasks t JOIN keys k ON t.key IS NOT DISTINCT FROM k.key),
running AS (SELECT part, start_ns, end_ns, max(end_ns) OVER (PARTITION BY part ORDER BY start_ns, end_ns
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
            FROM keyed),
per_key AS (SELECT part, sum(greatest(0, end_ns - greatest(start_ns, coalesce(prev_end, start_ns)))) AS busy_ns,
                   sum(1) AS task_count
            FROM running GROUP BY part)
SELECT k.key, u.busy_ns / 1000.0 AS busy_us, u.task_count
FROM per_key u JOIN keys k USING (part);

-- @macro _intervals_gaps(src)
-- @internal
-- Where a row of `src` (columns key, rid, start_ns, end_ns; the caller filters the rows) starts after
-- every row that starts before it (per key) has ended: the idle stretch from the latest end before it
-- to its start. Ties are broken by rid (the ops row's number in storage), so results repeat: the readers
-- insert a run's rows in its files' order, read alone or with other runs (tests/test_row_order.py). The row
-- ending last is found by one max over (end_ns, rid) packed into a HUGEINT (end_ns * 2^63 + rid, rid
-- being a non-negative BIGINT): an integer max, not an arg_max comparing STRUCTs at every step of the
-- window's segment tree; the latest end is that max shifted back (>> 63 floors), not a second max.
-- @column key      STRUCT  the key of src
-- @column start_ns BIGINT  the latest end of the rows before the gap
-- @column end_ns   BIGINT  the start of the row after the gap
-- @column prev_rid BIGINT  rid of the row that ended last before the gap
-- @column rid      BIGINT  rid of the row after the gap
WITH keys AS (SELECT key, row_number() OVER (ORDER BY key) AS part FROM (SELECT DISTINCT key FROM query_table(src))),
keyed AS (SELECT k.part, t.rid, t.start_ns, t.end_ns FROM query_table(src) t JOIN keys k ON t.key IS NOT DISTINCT FROM k.key),
packed AS (SELECT *, max(end_ns::HUGEINT * 9223372036854775808 + rid) OVER (
                PARTITION BY part ORDER BY start_ns, end_ns, rid ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end_rid
            FROM keyed),
running AS (SELECT *, (prev_end_rid >> 63)::BIGINT AS prev_end FROM packed)
SELECT k.key, p.prev_end AS start_ns, p.start_ns AS end_ns,
       (p.prev_end_rid - p.prev_end::HUGEINT * 9223372036854775808)::BIGINT AS prev_rid, p.rid
FROM running p JOIN keys k USING (part) WHERE p.start_ns > p.prev_end;
