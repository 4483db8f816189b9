"""Parallel and communication groups of a job: from parallel_group_info, else inferred from which
ranks name a communication group; and the map from group-local to global ranks."""

from __future__ import annotations

import re

import duckdb
import pyarrow as pa

from analyzer.job.group_hash import comm_group_id
from analyzer.job.grouping import Job

_KINDS = (("default", "default"), ("dp", "dp"), ("tp", "tp"), ("pp", "pp"), ("ep", "ep"), ("exp", "ep"), ("cp", "cp"))


def group_kind(name: str) -> str:
    """The parallel dimension a metadata group name stands for.

    >>> group_kind("dp_cp"), group_kind("default_group"), group_kind("embd")
    ('dp', 'default', 'embd')
    """
    low = name.lower()
    return next((kind for prefix, kind in _KINDS if re.match(rf"{prefix}(_|$)", low)), low)


def _metadata_groups(job: Job) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Communication group id -> (kind, global ranks) of every parallel_group_info group of the
    job's ranks (the id is the hash of the group's key, comm_group_id)."""
    found: dict[str, tuple[str, tuple[int, ...]]] = {}
    for r in job.ranks:
        for key, name, ranks in r.meta.groups:
            if ranks:
                found.setdefault(comm_group_id(key), (group_kind(name), ranks))
    return found


def _rows(name: str, kind: str, source: str, ranks: list[int], local: list[int | None]) -> list[tuple]:
    return [(name, kind, source, r, g, len(ranks)) for r, g in zip(ranks, local, strict=True)]


_MEMBERS = """
SELECT group_name, list(DISTINCT rank ORDER BY rank) FROM (
    SELECT group_name, rank FROM job_comm_ops WHERE run_id = $job
    UNION ALL SELECT split_part(op_key, '@', 2), rank FROM {matrix}
) WHERE group_name <> '' GROUP BY group_name ORDER BY group_name
"""


def load_job_groups(con: duckdb.DuckDBPyConnection, job: Job, named_in: str = "communication.json") -> str:
    """Fill job_groups: every parallel_group_info group under its communication group id, and each
    other communication group named in the files with the ranks naming it: of a metadata group's
    kind when its members are exactly that group's, else 'unknown'. Returns a note on where the
    groups came from, for the job summary."""
    meta = _metadata_groups(job)
    rows: list[tuple] = []
    for gid, (kind, ranks) in sorted(meta.items()):
        rows += _rows(gid, kind, "metadata", list(ranks), list(range(len(ranks))))
    by_members = {tuple(sorted(ranks)): (kind, ranks) for kind, ranks in meta.values()}
    matrix = "_job_matrix_raw" if _has_matrix(con) else "(SELECT NULL AS op_key, NULL AS rank WHERE false)"
    members = con.execute(_MEMBERS.format(matrix=matrix), {"job": job.job_id}).fetchall()
    matched = 0
    for name, ranks in members:
        if name in meta:
            matched += 1
        elif hit := by_members.get(tuple(ranks)):
            matched += 1
            rows += _rows(name, hit[0], "metadata members", list(hit[1]), list(range(len(hit[1]))))
        else:
            rows += _rows(name, "unknown", "inferred", ranks, [None] * len(ranks))
    if rows:
        cols = list(zip(*rows, strict=True))
        table = pa.table(
            {
                "group_name": pa.array(cols[0], pa.string()),
                "group_kind": pa.array(cols[1], pa.string()),
                "source": pa.array(cols[2], pa.string()),
                "rank": pa.array(cols[3], pa.int32()),
                "group_rank": pa.array(cols[4], pa.int32()),
                "group_size": pa.array(cols[5], pa.int32()),
            }
        )
        con.register("_job_group_rows", table)
        con.execute("INSERT INTO job_groups BY NAME SELECT $job AS run_id, * FROM _job_group_rows", {"job": job.job_id})
        con.unregister("_job_group_rows")
    if not meta:
        return (
            "no parallel_group_info in the ranks' profiler_metadata.json: communication groups are inferred "
            f"from the ranks whose {named_in} names them; pipeline stages are unknown"
        )
    return (
        f"parallel groups from profiler_metadata.json; {matched} of {len(members)} communication groups "
        "in the files are among them"
    )


def _has_matrix(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(con.execute("SELECT 1 FROM duckdb_tables() WHERE table_name = '_job_matrix_raw'").fetchall())


def set_pp_stages(con: duckdb.DuckDBPyConnection, job_id: str) -> None:
    """job_ranks.pp_stage: the rank's index in its metadata pp group."""
    con.execute(
        "UPDATE job_ranks SET pp_stage = g.group_rank FROM job_groups g "
        "WHERE g.run_id = job_ranks.run_id AND g.rank = job_ranks.rank AND g.group_kind = 'pp' "
        "AND g.source LIKE 'metadata%' AND job_ranks.run_id = $job AND g.group_size > 1",
        {"job": job_id},
    )
