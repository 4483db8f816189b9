"""job_links from the communication matrices: group-local ranks mapped to global ranks.

A matrix row names its ranks within the communication group. The map to global ranks is, in order:
the group's members when they match a metadata group (job_groups.group_rank); else the rank whose
file wrote the row, as its own LOCAL link 'l-l' names it (or as the source rank it writes most: each
rank writes the links it sends on);
else, when every such writer's local rank equals its global rank, the identity.
"""

from __future__ import annotations

import duckdb

from analyzer.ingest.model import Problem
from analyzer.job.analysis_db_scan import LINK_NAMES, RANK_NAMES
from analyzer.job.value_checks import Field, checked, damaged_values

# The numbers of a matrix row and its ranks ('src-dst'), as value_checks reads them from _job_links_raw.
LINK_FIELDS = {
    "src_group_rank": Field("source rank", "split_part(ln.key, '-', 1)", kind="id", db_name=RANK_NAMES["source rank"]),
    "dst_group_rank": Field(
        "destination rank", "split_part(ln.key, '-', 2)", kind="id", db_name=RANK_NAMES["destination rank"]
    ),
    **{
        col: Field(name, f'ln.value."{name}"', scale, kind, LINK_NAMES[name])
        for col, name, scale, kind in (
            ("transit_size_mb", "Transit Size(MB)", 1.0, "size_mb"),
            ("transit_us", "Transit Time(ms)", 1000.0, "time_us"),
            ("bandwidth_gb_per_s", "Bandwidth(GB/s)", 1.0, "gb_per_s"),
        )
    },
}
_RAW = """
SELECT rank, path, db_table, step_id, op_kind, op_key, unnest(map_entries(op)) AS ln FROM _job_matrix_raw
"""
# A row with any unsound number is left out whole: a link's bandwidth is its data over its time, and
# either one alone would misstate it. The links keep the order of the matrices' rows (link_no): a job's sums
# add them in that order, whatever else the connection holds (a join's output follows whichever side DuckDB
# builds its hash table of).
_LINKS = """
WITH raw AS (
    SELECT rank AS reported_by, step_id, op_kind, split_part(op_key, '@', 1) AS matrix_op,
           split_part(op_key, '@', 2) AS group_name, ln, row_number() OVER () AS link_no
    FROM _job_links_raw
),
l AS (
    SELECT link_no, reported_by, step_id, op_kind, matrix_op, group_name,
           CAST({src_group_rank} AS INTEGER) AS src_group_rank, CAST({dst_group_rank} AS INTEGER) AS dst_group_rank,
           ln.value."Transport Type" AS transport, ln.value."Op Name" AS op_name,
           {transit_size_mb} AS transit_size_mb, {transit_us} AS transit_us, {bandwidth_gb_per_s} AS bandwidth_gb_per_s
    FROM raw WHERE ln.value IS NOT NULL
      AND ({transit_size_mb_raw} IS NULL OR {transit_size_mb} IS NOT NULL)
      AND ({transit_us_raw} IS NULL OR {transit_us} IS NOT NULL)
      AND ({bandwidth_gb_per_s_raw} IS NULL OR {bandwidth_gb_per_s} IS NOT NULL)
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
ORDER BY l.link_no
""".format(
    **{col: checked(f) for col, f in LINK_FIELDS.items()},
    **{f"{col}_raw": f.raw for col, f in LINK_FIELDS.items()},
)


def load_job_links(con: duckdb.DuckDBPyConnection, job_id: str) -> list[Problem]:
    """Fill job_links from the temp table _job_matrix_raw (summary_scan.py), then drop it; returns the
    unsound numbers and ranks met, each named (their rows are left out)."""
    if not con.execute("SELECT 1 FROM duckdb_tables() WHERE table_name = '_job_matrix_raw'").fetchall():
        return []
    con.execute(f"CREATE OR REPLACE TEMP TABLE _job_links_raw AS {_RAW}")
    con.execute(f"INSERT INTO job_links BY NAME {_LINKS}", {"job": job_id})
    place = "'step ' || step_id || ' ' || op_key || ' ' || ln.key"
    problems = damaged_values(
        con, "_job_links_raw", list(LINK_FIELDS.values()), place, "that link row of this rank's matrix"
    )
    con.execute("DROP TABLE _job_links_raw")
    con.execute("DROP TABLE _job_matrix_raw")
    return problems
