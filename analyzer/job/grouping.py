"""Which exports under a path are the ranks of one job: rank ids from metadata; world size, collection
end, parallel layout and folder tell jobs apart."""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeGuard

import duckdb

from analyzer.ingest.metadata.metadata_values import INT_MAX
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
        """The world size most ranks record (the larger on a tie): one rank's odd metadata does not
        make the job another size."""
        sizes = [r.meta.world_size for r in self.ranks if r.meta.world_size]
        return max(sizes, key=lambda w: (sizes.count(w), w)) if sizes else None


def _rank_from_name(name: str) -> int | None:
    """A rank number in a folder name ('rank_3', 'rank3_ascend_pt', 'worker-rank-12'); none beyond an INTEGER, as
    a rank in the metadata (rank_metadata.py reads it as one): such a number names no rank.

    >>> _rank_from_name("rank12_ascend_pt"), _rank_from_name("rank99999999999_ascend_pt"), _rank_from_name("run_3")
    (12, None, None)
    """
    m = re.search(r"rank[_-]?(\d+)", name, re.IGNORECASE)
    return int(m.group(1)) if m and int(m.group(1)) <= INT_MAX else None


def _job_id(ranks: list[JobRank], top: Path, taken: set[str]) -> str:
    """The folder holding the ranks (the deepest common one), named like a run id; a name already taken
    (a run, or another job in a folder of the same name) gets '-job', then '-job2', '-job3', ..."""
    common = Path(os.path.commonpath([r.source.root.parent for r in ranks]))
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", (common if common.is_relative_to(top) else top).name) or "job"
    candidates = itertools.chain((name, f"{name}-job"), (f"{name}-job{n}" for n in itertools.count(2)))
    return next(c for c in candidates if c not in taken)


def _end_ns(r: JobRank) -> int:
    """When the rank's collection ended; only asked of ranks whose metadata records it."""
    end = r.meta.collection_end_ns
    if end is None:
        raise ValueError(f"rank {r.rank}: no collection end time")
    return end


def _by_time(ranks: list[JobRank]) -> list[list[JobRank]]:
    """Ranks split where their collections ended more than SAME_RUN_S apart (other sessions); ranks
    whose metadata records no end time are one group of their own."""
    timed = sorted((r for r in ranks if r.meta.collection_end_ns is not None), key=_end_ns)
    clusters: list[list[JobRank]] = []
    for r in timed:
        if clusters and _end_ns(r) - _end_ns(clusters[-1][-1]) <= SAME_RUN_S * 10**9:
            clusters[-1].append(r)
        else:
            clusters.append([r])
    untimed = [r for r in ranks if r.meta.collection_end_ns is None]
    return clusters + ([untimed] if untimed else [])


def _parallel_key(r: JobRank) -> str | None:
    return None if r.meta.parallel is None else "x".join("?" if v is None else str(v) for v in r.meta.parallel)


def _folder_key(r: JobRank, common: Path) -> str:
    """The folder right below ``common`` that holds the export ('' when the export sits directly in it)."""
    parts = r.source.root.relative_to(common).parts
    return parts[0] if len(parts) > 1 else ""


def _has_duplicate_rank(ranks: list[JobRank]) -> bool:
    return len({r.rank for r in ranks}) < len(ranks)


def _by_key(cluster: list[JobRank], key) -> list[list[JobRank]] | None:
    parts: dict[str | None, list[JobRank]] = {}
    for r in cluster:
        parts.setdefault(key(r), []).append(r)
    if None in parts:  # a rank whose layout is not recorded could be of either
        return None
    return [part for _, part in sorted(parts.items())]


def _by_session(cluster: list[JobRank]) -> list[list[JobRank]] | None:
    """Sessions of one job written into one place (a profiler repeat, a rerun into the same folder): as
    many sessions as a rank repeats, cut at the widest gaps between collection ends; None unless every
    rank records its end and each session holds a rank once."""
    if any(r.meta.collection_end_ns is None for r in cluster):
        return None
    timed = sorted(cluster, key=lambda r: (_end_ns(r), r.rank))
    sessions = max(sum(1 for r in cluster if r.rank == x.rank) for x in cluster)
    gaps = sorted(
        range(1, len(timed)),
        key=lambda i: (_end_ns(timed[i]) - _end_ns(timed[i - 1]), i),
        reverse=True,
    )[: sessions - 1]
    if any(timed[i].meta.collection_end_ns == timed[i - 1].meta.collection_end_ns for i in gaps):
        return None
    cuts = [0, *sorted(gaps), len(timed)]
    parts = [timed[a:b] for a, b in itertools.pairwise(cuts)]
    return None if any(_has_duplicate_rank(p) for p in parts) else parts


def _fair(parts: list[list[JobRank]] | None) -> TypeGuard[list[list[JobRank]]]:
    """A split tells jobs apart when it separates something and the parts share many ranks (two jobs, two
    sessions: each holds most of the ranks). Parts that share few ranks, fewer than half of the smallest
    part, are pieces of one job with a stray copy: one copy of a rank in another node's folder must not
    cut its job in two."""
    if not parts or len(parts) < 2:
        return False
    seen: dict[int, int] = {}
    for part in parts:
        for rank in {r.rank for r in part}:
            seen[rank] = seen.get(rank, 0) + 1
    shared = sum(1 for n in seen.values() if n > 1)
    return not shared * 2 < min(len({r.rank for r in p}) for p in parts)


def _split_conflicts(cluster: list[JobRank]) -> list[list[JobRank]]:
    """A cluster in which a rank id repeats holds several jobs or sessions (a job's rank ids are
    unique), or a stray copy: split it by what tells jobs apart, first their parallel layout
    (distributed_args), then the collection end (sessions of one job in one place), then the folder
    each job's exports sit in (the folder right below the deepest one common to all), as often as a
    rank still repeats and the split is fair (_fair). Without a repeat the cluster stays whole, so
    one job spread over several folders (a folder per node) stays one job."""
    if not _has_duplicate_rank(cluster):
        return [cluster]
    common = Path(os.path.commonpath([r.source.root.parent for r in cluster]))
    for split in (
        lambda c: _by_key(c, _parallel_key),
        _by_session,
        lambda c: _by_key(c, lambda r: _folder_key(r, common)),
    ):
        parts = split(cluster)
        if _fair(parts):
            return [job for part in parts for job in _split_conflicts(part)]
    return [cluster]


def _job(cluster: list[JobRank], top: Path, taken: set[str]) -> Job | None:
    """The job of one cluster of ranks (a rank met twice keeps its first export), or None under two ranks."""
    kept: dict[int, JobRank] = {}
    problems = []
    for r in sorted(cluster, key=lambda r: (r.rank, r.source.rel_path)):
        if (first := kept.get(r.rank)) is not None:
            problems.append(
                Problem(
                    r.source.rel_path,
                    "",
                    "warning",
                    f"rank {r.rank} appears twice in one job, here and in {first.source.rel_path} (their world "
                    "size, parallel layout, folder and collection end do not tell two jobs apart): this export is "
                    "left out of the job view",
                    "put the rank exports of each job in a folder of their own",
                )
            )
            continue
        kept[r.rank] = r
    ranks = list(kept.values())
    if len(ranks) < 2:
        return None
    return Job(_job_id(ranks, top, taken), tuple(ranks), tuple(problems))


def find_jobs(con: duckdb.DuckDBPyConnection, sources: list[ExportSource], top: Path) -> list[Job]:
    """The jobs among ``sources``: the exports carrying a rank (metadata, else a rank in the folder
    name), grouped by world size where it is recorded and by the end of their collection (ranks of
    one run end within SAME_RUN_S); a group in which a rank repeats is split by parallel layout and
    by folder (_split_conflicts); a job needs two ranks or more. A rank still met twice keeps its
    first export (path order) and the other is named as a problem.

    Neither the communication group ids nor the collective names tell two jobs apart: where the
    metadata records parallel_group_info, a group's id is the hash of its key ('group_name_5',
    group_hash.py), the same in every job of one layout."""
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
    jobs, lone = [], []
    for world in sorted(candidates, key=lambda w: (w is None, w or 0)):
        for cluster in _by_time(candidates[world]):
            found, left = _cluster_jobs(cluster, top, taken)
            jobs += found
            lone += left
    return _place_lone_ranks(jobs, lone)


def _cluster_jobs(cluster: list[JobRank], top: Path, taken: set[str]) -> tuple[list[Job], list[JobRank]]:
    """The jobs of one cluster of ranks (several when a rank repeats), and the ranks of a cluster that
    makes no job (a rank on its own); a rank a split leaves on its own beside a job is named as a
    problem of the first job, so that it is not lost without a word."""
    found, alone = [], []
    for part in _split_conflicts(cluster):
        job = _job(part, top, taken)
        if job is None:
            alone += part
            continue
        taken.add(job.job_id)
        found.append(job)
    if found and alone:
        found[0] = replace(found[0], problems=(*found[0].problems, *map(_left_alone, alone)))
        return found, []
    return found, alone


def _apart(r: JobRank, job: Job) -> str:
    """Why ``r`` was not grouped with ``job``'s ranks."""
    if r.meta.world_size and job.world_size and r.meta.world_size != job.world_size:
        return f"its metadata says world size {r.meta.world_size}, the other ranks' {job.world_size}"
    ends = [x.meta.collection_end_ns for x in job.ranks if x.meta.collection_end_ns is not None]
    if r.meta.collection_end_ns is None:
        return "its profiler_info records no end of collection (end_info)"
    if not ends:
        return "the other ranks' profiler_info record no end of collection (end_info)"
    gap = abs(r.meta.collection_end_ns - sorted(ends)[len(ends) // 2]) / 1e9
    return f"its collection ended {gap:.0f} s from the other ranks' (a clock set differently, or another run)"


def _place_lone_ranks(jobs: list[Job], lone: list[JobRank]) -> list[Job]:
    """Each rank left on its own that holds collectives (``_holds_collectives``) joins the one job of known world
    size that lacks its rank id (and holds it), with a warning saying why it stood apart; a rank several jobs
    could take is named as left out. A rank without collectives, or that no job lacks, is a run of its own."""
    for r in sorted(lone, key=lambda r: (r.rank, r.source.rel_path)):
        if not _holds_collectives(r.source):
            continue
        fits = [
            i
            for i, job in enumerate(jobs)
            if job.world_size and r.rank < job.world_size and r.rank not in {x.rank for x in job.ranks}
        ]
        if len(fits) == 1:
            job = jobs[fits[0]]
            note = Problem(
                r.source.rel_path,
                "",
                "warning",
                f"rank {r.rank} is taken into this job, the only one lacking rank {r.rank}, although {_apart(r, job)}",
                "check this rank's metadata (profiler_info, profiler_metadata.json) and its clock",
            )
            ranks = tuple(sorted((*job.ranks, r), key=lambda x: x.rank))
            jobs[fits[0]] = replace(job, ranks=ranks, problems=(*job.problems, note))
        elif fits:
            first = jobs[fits[0]]
            jobs[fits[0]] = replace(first, problems=(*first.problems, _left_out(r, len(fits))))
    return jobs


def _holds_collectives(source: ExportSource) -> bool:
    """Whether the export holds a job's collectives: communication.json or communication_matrix.json, or, in the
    db form, an analysis.db holding their tables (which the job reads as it reads the files)."""
    if source.has("communication") or source.has("communication_matrix"):
        return True
    from analyzer.job.analysis_db_scan import DB_TABLES, holds_any  # a db-form rank standing apart: seldom

    tables = (*DB_TABLES["communication"], *DB_TABLES["communication_matrix"])
    return holds_any(source.files.get("analysis_db", ()), tables)


def _left_out(r: JobRank, fitting: int) -> Problem:
    return Problem(
        r.source.rel_path,
        "",
        "warning",
        f"rank {r.rank} stands apart from every job (its world size or collection end is of no other rank) "
        f"and {fitting} jobs lack rank {r.rank}: it is left out of every job view",
        "put the rank exports of each job in a folder of their own",
    )


def _left_alone(r: JobRank) -> Problem:
    return Problem(
        r.source.rel_path,
        "",
        "warning",
        f"rank {r.rank} repeats a rank of a job beside it, but its folder or parallel layout is of no other "
        "rank: it is left out of every job view (a job needs two ranks)",
        "put the rank exports of each job in a folder of their own",
    )
