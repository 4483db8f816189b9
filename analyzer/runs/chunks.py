"""Split a batch's runs into chunks, one worker's pass each, and hand back each run's tables as its chunk ends.

A pass has a fixed cost (a connection, the helper views, planning every rule) that outweighs what
each small run adds to it, so every worker gets one chunk, unless its files would not fit a worker's
memory or it would hold more runs than a pass should. The batch's jobs go to the same workers after
the chunks: small items that keep every core busy until the end, in the pool the chunks started.
"""

from __future__ import annotations

import math
import os
from collections.abc import Generator
from pathlib import Path
from typing import TypeVar

from analyzer.runs.chunk_work import RunChunk, analyze_chunk
from analyzer.runs.executor import Executor, lost_table
from analyzer.runs.job_catalog import JobChunk, JobTask, analyze_jobs
from analyzer.runs.packed_results import PackedResults
from analyzer.runs.work import RunTables, RunTask, WorkSettings

CHUNKS_PER_WORKER = 1  # the jobs after the chunks fill the end
MAX_RUNS = 256  # past a few hundred small runs a pass costs no less per run, and its results wait longer
MAX_BYTES = 64 << 20  # the files of a chunk: a worker holds their tables at once
MAX_JOB_RANKS = 64  # the ranks of the jobs judged in one connection; a larger job is judged alone

T = TypeVar("T")


def export_bytes(path: str) -> int:
    """The size of an export's files (0 when it cannot be listed: its run fails in the worker)."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += (Path(folder) / name).lstat().st_size
            except OSError:
                continue
    return total


def plan_chunks(tasks: list[RunTask], workers: int, sizes: list[int]) -> list[RunChunk]:
    """``tasks`` in their order, cut into chunks of at most MAX_RUNS runs and MAX_BYTES of files (an export
    larger than that is a chunk of its own), CHUNKS_PER_WORKER per worker and two at least."""
    # At least two: the first chunk's runs are committed while the next is read, and a stop loses at most half.
    per_chunk = max(1, min(MAX_RUNS, math.ceil(len(tasks) / max(2, workers * CHUNKS_PER_WORKER))))
    return [RunChunk(part) for part in _cut(tasks, sizes, per_chunk, MAX_BYTES)]


def plan_job_chunks(jobs: list[JobTask], workers: int) -> list[JobChunk]:
    """``jobs`` in their order, cut into about one chunk per worker of at most MAX_JOB_RANKS ranks in all
    (a larger job is a chunk of its own)."""
    per_chunk = max(1, math.ceil(len(jobs) / max(1, workers)))
    return [JobChunk(part) for part in _cut(jobs, [len(t.job.ranks) for t in jobs], per_chunk, MAX_JOB_RANKS)]


def _cut(items: list[T], weights: list[int], per_chunk: int, limit: int) -> list[tuple[T, ...]]:
    """``items`` in their order, cut into parts of at most ``per_chunk`` items whose ``weights`` sum to at most
    ``limit`` (an item heavier than that is a part of its own)."""
    parts: list[tuple[T, ...]] = []
    current: list[T] = []
    held = 0
    for item, weight in zip(items, weights, strict=True):
        if current and (len(current) == per_chunk or held + weight > limit):
            parts.append(tuple(current))
            current, held = [], 0
        current.append(item)
        held += weight
    return parts + ([tuple(current)] if current else [])


def _largest_first(chunks: list[RunChunk], sizes: dict[str, int]) -> list[RunChunk]:
    """The chunks by their files' size, largest first (stable): the small ones fill the cores at the end."""
    return sorted(chunks, key=lambda c: -sum(sizes[t.export_path] for t in c.tasks))


def analyze_item(item: RunChunk | JobChunk, settings: WorkSettings) -> list[RunTables]:
    """What a worker does with one item: a chunk's runs' tables, or its jobs' (in its order), packed to be sent
    to the driver (``packed_results.py``)."""
    if isinstance(item, JobChunk):
        return PackedResults(analyze_jobs(item, settings))
    return PackedResults(analyze_chunk(item, settings))


def run_chunked(
    tasks: list[RunTask], settings: WorkSettings, executor: Executor, jobs: list[JobTask] | None = None
) -> Generator[list[tuple[RunTask | JobTask, RunTables]], None, None]:
    """Yield, as each chunk of runs (or of ``jobs``) finishes, its runs' (task, tables) (its jobs'); those lost
    with their worker each give a failures row marked INFRASTRUCTURE (``executor.lost_table``)."""
    sizes = {t.export_path: export_bytes(t.export_path) for t in tasks}
    chunks = _largest_first(plan_chunks(tasks, executor.slots, [sizes[t.export_path] for t in tasks]), sizes)
    items: list[RunChunk | JobChunk] = [*chunks, *plan_job_chunks(jobs or [], executor.slots)]
    for item, result in executor.completed(analyze_item, items, settings):
        members: tuple[RunTask | JobTask, ...] = item.tasks
        if isinstance(result, BaseException):
            result = [lost_table(task, result) for task in members]
        yield list(zip(members, result, strict=True))
