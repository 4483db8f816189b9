"""job_links from the communication matrices: group-local ranks mapped to global ranks.

A matrix row names its ranks within the communication group. The map to global ranks is, in order:
the group's members when they match a metadata group (job_groups.group_rank); else the rank whose
file wrote the row, as its own LOCAL link 'l-l' names it (or as the source rank it writes most: each
rank writes the links it sends on);
else, when every such writer's local rank equals its global rank, the identity.
"""

from __future__ import annotations

import duckdb

_LINKS = """
WITH raw AS (
    SELECT rank AS reported_by, step_id, op_kind, split_part(op_key, '@', 1) AS matrix_op,
           split_part(op_key, '@', 2) AS group_name, unnest(map_entries(op)) AS ln
    FROM _job_matrix_raw
),
l AS (
    SELECT reported_by, step_id, op_kind, matrix_op, group_name,
           TRY_CAST(split_part(ln.key, '-', 1) AS INTEGER) AS src_group_rank,
           TRY_CAST(split_part(ln.key, '-', 2) AS INTEGER) AS dst_group_rank,
           ln.value."Transport Type" AS transport, ln.value."Op Name" AS op_name,
           ln.value."Transit Size(MB)" AS transit_size_mb, ln.value."Transit Time(ms)" * 1000 AS transit_us,
           ln.value."Bandwidth(GB/s)" AS bandwidth_gb_per_s
    FROM raw WHERE ln.value IS NOT NULL
),
known AS (SELECT DISTINCT group_name, group_rank, rank FROM job_groups
          WHERE run_id = $job AND group_rank IS NOT NULL AND source LIKE 'metadata%'),
writers AS (
    SELECT group_name, coalesce(min(src_group_rank) FILTER (src_group_rank = dst_group_rank), mode(src_group_rank))
               AS group_rank, reported_by AS rank
    FROM l WHERE group_name NOT IN (SELECT group_name FROM known) GROUP BY group_name, reported_by
),
identity AS (
    SELECT group_name FROM writers GROUP BY group_name HAVING bool_and(group_rank = rank)
),
map AS (
    SELECT * FROM known
    UNION SELECT * FROM writers
    UNION SELECT DISTINCT l.group_name, l.dst_group_rank, l.dst_group_rank FROM l JOIN identity USING (group_name)
    UNION SELECT DISTINCT l.group_name, l.src_group_rank, l.src_group_rank FROM l JOIN identity USING (group_name)
)
SELECT $job AS run_id, l.step_id, l.op_kind, l.group_name, l.matrix_op, nullif(l.op_name, '') AS op_name, l.reported_by,
       s.rank AS src_rank, d.rank AS dst_rank, l.src_group_rank, l.dst_group_rank, l.transport,
       l.transit_size_mb, l.transit_us, l.bandwidth_gb_per_s
FROM l
LEFT JOIN (SELECT group_name, group_rank, min(rank) AS rank FROM map GROUP BY ALL) s
       ON s.group_name = l.group_name AND s.group_rank = l.src_group_rank
LEFT JOIN (SELECT group_name, group_rank, min(rank) AS rank FROM map GROUP BY ALL) d
       ON d.group_name = l.group_name AND d.group_rank = l.dst_group_rank
"""


def load_job_links(con: duckdb.DuckDBPyConnection, job_id: str) -> None:
    """Fill job_links from the temp table _job_matrix_raw (summary_scan.py), then drop it."""
    if not con.execute("SELECT 1 FROM duckdb_tables() WHERE table_name = '_job_matrix_raw'").fetchall():
        return
    con.execute(f"INSERT INTO job_links BY NAME {_LINKS}", {"job": job_id})
    con.execute("DROP TABLE _job_matrix_raw")
