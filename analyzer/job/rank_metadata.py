"""Rank identity of every export: one DuckDB scan over all profiler_info*.json and profiler_metadata.json."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from analyzer.ingest.model import ExportSource


@dataclass(frozen=True)
class RankMetadata:
    """What an export's metadata files say about its place in a job; None where they are silent."""

    rank: int | None
    rank_source: str  # 'profiler_info', 'distributed_args' or ''
    world_size: int | None
    collection_end_ns: int | None
    groups: tuple[tuple[str, str, tuple[int, ...]], ...]  # (key, group name, global ranks) of parallel_group_info
    parallel: tuple[int | None, ...] | None = None  # distributed_args sizes: tp, pp, dp, cp, ep


# One parse per file into only what is needed (json_transform to a typed struct): the rank's numbers
# and its groups as (name, global ranks), never the whole documents. Unparsable files give NULLs.
_SHAPE = (
    '{"rank_id": "VARCHAR", "end_info": {"collectionTimeEnd": "BIGINT"}, '
    '"distributed_args": {"rank": "INTEGER", "world_size": "INTEGER", "tensor_model_parallel_size": "INTEGER", '
    '"pipeline_model_parallel_size": "INTEGER", "data_parallel_size": "INTEGER", "context_parallel_size": "INTEGER", '
    '"expert_model_parallel_size": "INTEGER"}, '
    '"parallel_group_info": "MAP(VARCHAR, STRUCT(group_name VARCHAR, global_ranks INTEGER[]))"}'
)
_SELECT = """
WITH f AS (SELECT filename, json_transform(TRY_CAST(content AS JSON), $shape) AS m FROM read_text($paths))
SELECT k.source_no, k.kind, TRY_CAST(m.rank_id AS INTEGER) AS info_rank, m.end_info.collectionTimeEnd AS end_ns,
       m.distributed_args.rank AS args_rank, m.distributed_args.world_size AS world_size,
       CASE WHEN m.distributed_args.world_size IS NOT NULL THEN
           [m.distributed_args.tensor_model_parallel_size, m.distributed_args.pipeline_model_parallel_size,
            m.distributed_args.data_parallel_size, m.distributed_args.context_parallel_size,
            m.distributed_args.expert_model_parallel_size] END AS parallel,
       list_transform(map_entries(m.parallel_group_info),
                      lambda e: {'key': e.key, 'name': coalesce(e.value.group_name, e.key),
                                 'ranks': e.value.global_ranks}) AS groups
FROM f JOIN _job_meta_files k ON k.path = f.filename
"""
# Files per scan: a big job's metadata files each list every rank (megabytes of text per thousand ranks), and a
# scan holds its files' text at once.
_FILES_PER_SCAN = 256
_RANKS = """
SELECT source_no,
       max(info_rank) FILTER (kind = 'info'), max(end_ns) FILTER (kind = 'info'),
       max(args_rank) FILTER (kind = 'meta'), max(world_size) FILTER (kind = 'meta'),
       max(parallel) FILTER (kind = 'meta')
FROM _job_meta GROUP BY source_no ORDER BY source_no
"""
# Each distinct (group name, global ranks) once, with the sources declaring it: every rank of a job
# repeats the groups it is in, and the default group lists every rank.
_GROUPS = """
SELECT g.key, g.name, g.ranks, list(DISTINCT source_no ORDER BY source_no) AS sources
FROM (SELECT source_no, unnest(groups) AS g FROM _job_meta WHERE kind = 'meta')
WHERE g.ranks IS NOT NULL GROUP BY ALL ORDER BY g.key, g.name, g.ranks
"""
# The same grouped by the hash of the ranks instead of the ranks themselves (a job's groups list up to every
# rank, and the sort of so long keys costs more than all else); ``same`` is false when two different lists
# share a hash, and _GROUPS is asked instead.
_GROUPS_BY_HASH = """
WITH g AS (SELECT source_no, g.key AS key, g.name AS name, g.ranks AS ranks, hash(g.ranks) AS ranks_hash
           FROM (SELECT source_no, unnest(groups) AS g FROM _job_meta WHERE kind = 'meta') WHERE g.ranks IS NOT NULL)
SELECT key, name, min(ranks) AS ranks, list(DISTINCT source_no ORDER BY source_no) AS sources,
       min(ranks) IS NOT DISTINCT FROM max(ranks) AS same
FROM g GROUP BY key, name, ranks_hash ORDER BY key, name, ranks
"""


def read_rank_metadata(con: duckdb.DuckDBPyConnection, sources: list[ExportSource]) -> list[RankMetadata]:
    """The rank metadata of each source, in the order given (one scan over every metadata file)."""
    rows = [
        (n, str(p), kind)
        for n, s in enumerate(sources)
        for kind, key in (("info", "profiler_info"), ("meta", "profiler_metadata"))
        for p in s.metadata_files.get(key, ())
    ]
    found: dict[int, tuple] = {}
    groups: dict[int, list[tuple[str, str, tuple[int, ...]]]] = {}
    if rows:
        import pyarrow as pa  # here, not with every command: a single export has no ranks to read

        files = pa.table(
            {
                "source_no": [r[0] for r in rows],
                "path": [r[1] for r in rows],
                "kind": [r[2] for r in rows],
            }
        )
        con.register("_job_meta_files", files)
        try:
            if _load(con, [r[1] for r in rows]):
                found = {r[0]: r[1:] for r in con.execute(_RANKS).fetchall()}
                for key, name, ranks, declared in _groups(con):
                    group = (str(key), str(name), tuple(int(r) for r in ranks if r is not None))
                    for n in declared:
                        groups.setdefault(n, []).append(group)
        finally:
            con.unregister("_job_meta_files")
            con.execute("DROP TABLE IF EXISTS _job_meta")
    out = []
    for n in range(len(sources)):
        info_rank, end_ns, args_rank, world, parallel = found.get(n, (None,) * 5)
        rank, origin = (info_rank, "profiler_info") if info_rank is not None else (args_rank, "distributed_args")
        out.append(
            RankMetadata(
                rank=rank,
                rank_source=origin if rank is not None else "",
                world_size=world,
                collection_end_ns=end_ns,
                groups=tuple(groups.get(n, ())),
                parallel=tuple(parallel) if parallel and any(v is not None for v in parallel) else None,
            )
        )
    return out


def _load(con: duckdb.DuckDBPyConnection, paths: list[str]) -> bool:
    """The TEMP table ``_job_meta``: what each file says, read _FILES_PER_SCAN files at a time; False when no
    file could be read (no table)."""
    created = False
    for start in range(0, len(paths), _FILES_PER_SCAN):
        created = _insert(con, paths[start : start + _FILES_PER_SCAN], created) or created
    return created


def _insert(con: duckdb.DuckDBPyConnection, paths: list[str], created: bool) -> bool:
    """Add what ``paths`` say to ``_job_meta`` (created unless ``created``); True when any file was read. A file
    read_text cannot read (not UTF-8 text) fails the scan: the halves are tried until it is alone and left out,
    silent as the files of no JSON (the rank's own reading names it)."""
    into = "INSERT INTO _job_meta" if created else "CREATE OR REPLACE TEMP TABLE _job_meta AS"
    try:
        con.execute(f"{into} {_SELECT}", {"paths": paths, "shape": _SHAPE})
        return True
    except (duckdb.OutOfMemoryException, duckdb.InterruptException):
        raise
    except duckdb.Error:
        if len(paths) == 1:
            return False
        half = len(paths) // 2
        first = _insert(con, paths[:half], created)
        return _insert(con, paths[half:], created or first) or first


def _groups(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    """(key, name, global ranks, declaring sources) of every distinct parallel group in ``_job_meta``."""
    rows = con.execute(_GROUPS_BY_HASH).fetchall()
    if all(row[4] for row in rows):
        return [row[:4] for row in rows]
    return con.execute(_GROUPS).fetchall()
