"""Rank identity of every export: one DuckDB scan over all profiler_info*.json and profiler_metadata.json."""

from __future__ import annotations

import json
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from analyzer.ingest.model import ExportSource


@dataclass(frozen=True)
class RankMetadata:
    """What an export's metadata files say about its place in a job; None where they are silent."""

    rank: int | None
    rank_source: str  # 'profiler_info', 'distributed_args' or ''
    world_size: int | None
    collection_end_ns: int | None
    groups: tuple[tuple[str, str, int | None, tuple[int, ...]], ...]  # (key, name, group_rank, global_ranks)


_SCAN = """
WITH f AS (
    SELECT m.source_no, m.kind, j.json
    FROM read_json_objects($paths, filename = true, format = 'auto', ignore_errors = true) j
    JOIN _job_meta_files m ON m.path = j.filename
)
SELECT source_no,
       max(TRY_CAST(json ->> '$.rank_id' AS INTEGER)) FILTER (kind = 'info') AS info_rank,
       max(TRY_CAST(json ->> '$.end_info.collectionTimeEnd' AS BIGINT)) FILTER (kind = 'info') AS end_ns,
       max(TRY_CAST(json ->> '$.distributed_args.rank' AS INTEGER)) FILTER (kind = 'meta') AS args_rank,
       max(TRY_CAST(json ->> '$.distributed_args.world_size' AS INTEGER)) FILTER (kind = 'meta') AS world_size,
       max(json -> '$.parallel_group_info') FILTER (kind = 'meta') AS groups
FROM f GROUP BY source_no ORDER BY source_no
"""


def _groups(value: object) -> tuple[tuple[str, str, int | None, tuple[int, ...]], ...]:
    """(key, group name, group rank, global ranks) of a parallel_group_info object (already parsed)."""
    if not isinstance(value, dict):
        return ()
    out = []
    for key, group in sorted(value.items()):
        if not isinstance(group, dict):
            continue
        ranks = group.get("global_ranks")
        ranks = tuple(int(r) for r in ranks if isinstance(r, int)) if isinstance(ranks, list) else ()
        local = group.get("group_rank")
        out.append((str(key), str(group.get("group_name") or key), local if isinstance(local, int) else None, ranks))
    return tuple(out)


def read_rank_metadata(con: duckdb.DuckDBPyConnection, sources: list[ExportSource]) -> list[RankMetadata]:
    """The rank metadata of each source, in the order given (one scan over every metadata file)."""
    rows = [
        (n, str(p), kind)
        for n, s in enumerate(sources)
        for kind, key in (("info", "profiler_info"), ("meta", "profiler_metadata"))
        for p in s.metadata_files.get(key, ())
    ]
    found: dict[int, tuple] = {}
    if rows:
        files = pa.table(
            {
                "source_no": [r[0] for r in rows],
                "path": [r[1] for r in rows],
                "kind": [r[2] for r in rows],
            }
        )
        con.register("_job_meta_files", files)
        try:
            result = con.execute(_SCAN, {"paths": [r[1] for r in rows]}).fetchall()
        finally:
            con.unregister("_job_meta_files")
        found = {r[0]: r[1:] for r in result}
    out = []
    for n in range(len(sources)):
        info_rank, end_ns, args_rank, world, groups = found.get(n, (None,) * 5)
        rank, origin = (info_rank, "profiler_info") if info_rank is not None else (args_rank, "distributed_args")
        out.append(
            RankMetadata(
                rank=rank,
                rank_source=origin if rank is not None else "",
                world_size=world,
                collection_end_ns=end_ns,
                groups=_groups(json.loads(groups) if groups else None),
            )
        )
    return out
