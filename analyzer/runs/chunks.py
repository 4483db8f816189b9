"""Split a batch's runs into chunks, one worker's pass each, and hand back each run's tables as its chunk ends.

A chunk is small enough that every worker gets more than one and that its files fit a worker's
memory, and large enough that the fixed cost of a pass (a connection, the helper views, the rules'
plan) is shared by many runs. The batch's jobs go to the same workers after the chunks: small items
that keep every core busy until the end, in the pool the chunks started.
"""

from __future__ import annotations

import math
import os
from collections.abc import Generator
from pathlib import Path

from analyzer.runs.chunk_work import RunChunk, analyze_chunk
from analyzer.runs.executor import Executor, lost_table
from analyzer.runs.job_catalog import JobTask, analyze_job
from analyzer.runs.work import RunTables, RunTask, WorkSettings

CHUNKS_PER_WORKER = 2  # a worker's last chunk is at most half its share; the jobs after the chunks fill the end
MAX_RUNS = 64  # past a few dozen small runs a pass costs little less per run, and its results wait longer
MAX_BYTES = 64 << 20  # the files of a chunk: a worker holds their tables at once


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
    larger than that is a chunk of its own), about CHUNKS_PER_WORKER per worker."""
    per_chunk = max(1, min(MAX_RUNS, math.ceil(len(tasks) / (max(1, workers) * CHUNKS_PER_WORKER))))
    chunks: list[RunChunk] = []
    current: list[RunTask] = []
    held = 0
    for task, size in zip(tasks, sizes, strict=True):
        if current and (len(current) == per_chunk or held + size > MAX_BYTES):
            chunks.append(RunChunk(tuple(current)))
            current, held = [], 0
        current.append(task)
        held += size
    chunks += [RunChunk(tuple(current))] if current else []
    return chunks


def _largest_first(chunks: list[RunChunk], sizes: dict[str, int]) -> list[RunChunk]:
    """The chunks by their files' size, largest first (stable): the small ones fill the cores at the end."""
    return sorted(chunks, key=lambda c: -sum(sizes[t.export_path] for t in c.tasks))


def analyze_item(item: RunChunk | JobTask, settings: WorkSettings) -> list[RunTables]:
    """What a worker does with one item: a chunk's runs' tables (in its order), or a job's (one)."""
    if isinstance(item, JobTask):
        return [analyze_job(item, settings)]
    return analyze_chunk(item, settings)


def run_chunked(
    tasks: list[RunTask], settings: WorkSettings, executor: Executor, jobs: list[JobTask] | None = None
) -> Generator[list[tuple[RunTask | JobTask, RunTables]], None, None]:
    """Yield, as each chunk (or job of ``jobs``) finishes, its runs' (task, tables) (the job's (task, tables));
    those lost with their worker each give a failures row marked INFRASTRUCTURE (``executor.lost_table``)."""
    sizes = {t.export_path: export_bytes(t.export_path) for t in tasks}
    chunks = _largest_first(plan_chunks(tasks, executor.slots, [sizes[t.export_path] for t in tasks]), sizes)
    items: list[RunChunk | JobTask] = [*chunks, *(jobs or [])]
    for item, result in executor.completed(analyze_item, items, settings):
        members = item.tasks if isinstance(item, RunChunk) else (item,)
        if isinstance(result, BaseException):
            result = [lost_table(task, result) for task in members]
        yield list(zip(members, result, strict=True))
