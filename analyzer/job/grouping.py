"""Which exports under a path are the ranks of one job: rank ids from metadata, one job per world."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from analyzer.ingest.model import ExportSource, Problem
from analyzer.job.rank_metadata import RankMetadata, read_rank_metadata

# Ranks of one job end their collection within this many seconds of each other.
SAME_RUN_S = 600
# Kinds that hold per-task data: a rank with one of them also gets its own per-rank diagnosis.
TASK_KINDS = ("op_summary", "timeline", "task_time", "torch_db", "msprof_db")


@dataclass(frozen=True)
class JobRank:
    """One rank of a job and its export."""

    rank: int
    source: ExportSource
    meta: RankMetadata
    rank_source: str

    @property
    def has_kernels(self) -> bool:
        return any(self.source.has(k) for k in TASK_KINDS)


@dataclass(frozen=True)
class Job:
    """Several rank exports of one distributed run."""

    job_id: str
    ranks: tuple[JobRank, ...]  # by rank
    problems: tuple[Problem, ...] = ()

    @property
    def world_size(self) -> int | None:
        sizes = {r.meta.world_size for r in self.ranks if r.meta.world_size}
        return max(sizes) if sizes else None


def _rank_from_name(name: str) -> int | None:
    """A rank number in a folder name ('rank_3', 'rank3_ascend_pt', 'worker-rank-12')."""
    m = re.search(r"rank[_-]?(\d+)", name, re.IGNORECASE)
    return int(m.group(1)) if m else None


def _job_id(ranks: list[JobRank], top: Path, taken: set[str]) -> str:
    """The folder holding the ranks (the deepest common one), named like a run id."""
    common = Path(os.path.commonpath([r.source.root.parent for r in ranks]))
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", (common if common.is_relative_to(top) else top).name) or "job"
    return name if name not in taken else f"{name}-job"


def _by_time(ranks: list[JobRank]) -> list[list[JobRank]]:
    """Ranks split where their collections ended more than SAME_RUN_S apart (other sessions); ranks
    whose metadata records no end time are one group of their own."""
    timed = sorted((r for r in ranks if r.meta.collection_end_ns is not None), key=lambda r: r.meta.collection_end_ns)
    clusters: list[list[JobRank]] = []
    for r in timed:
        if clusters and r.meta.collection_end_ns - clusters[-1][-1].meta.collection_end_ns <= SAME_RUN_S * 10**9:
            clusters[-1].append(r)
        else:
            clusters.append([r])
    untimed = [r for r in ranks if r.meta.collection_end_ns is None]
    return clusters + ([untimed] if untimed else [])


def _job(cluster: list[JobRank], top: Path, taken: set[str]) -> Job | None:
    """The job of one cluster of ranks (a rank met twice keeps its first export), or None under two ranks."""
    ranks, seen, problems = [], set(), []
    for r in sorted(cluster, key=lambda r: (r.rank, r.source.rel_path)):
        if r.rank in seen:
            problems.append(
                Problem(
                    r.source.rel_path,
                    "",
                    "warning",
                    f"rank {r.rank} appears twice in the job; this export is left out of the job view",
                    "give the job folder of one run only",
                )
            )
            continue
        seen.add(r.rank)
        ranks.append(r)
    if len(ranks) < 2:
        return None
    return Job(_job_id(ranks, top, taken), tuple(ranks), tuple(problems))


def find_jobs(con: duckdb.DuckDBPyConnection, sources: list[ExportSource], top: Path) -> list[Job]:
    """The jobs among ``sources``: the exports carrying a rank (metadata, else a rank in the folder
    name), grouped by world size where it is recorded and by the end of their collection (ranks of
    one run end within SAME_RUN_S); a job needs two ranks or more. A rank met twice keeps its first
    export (path order) and the other is named as a problem."""
    if len(sources) < 2:
        return []
    metas = read_rank_metadata(con, sources)
    candidates: dict[int | None, list[JobRank]] = {}
    for source, meta in zip(sources, metas, strict=True):
        rank, origin = meta.rank, meta.rank_source
        if rank is None and (named := _rank_from_name(source.root.name)) is not None:
            rank, origin = named, "folder_name"
        if rank is None:
            continue
        candidates.setdefault(meta.world_size, []).append(JobRank(rank, source, meta, origin))
    if None in candidates and len(candidates) == 2:  # ranks without a world size join the one job that has it
        unknown = candidates.pop(None)
        next(iter(candidates.values())).extend(unknown)
    taken = {s.source_id for s in sources}
    jobs = []
    for world in sorted(candidates, key=lambda w: (w is None, w or 0)):
        for cluster in _by_time(candidates[world]):
            job = _job(cluster, top, taken)
            if job is not None:
                taken.add(job.job_id)
                jobs.append(job)
    return jobs
