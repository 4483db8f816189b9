"""Split a batch's runs into chunks, one worker's pass each, and hand back each run's tables as its chunk ends.

A chunk is small enough that every worker gets several (the last chunks to finish keep the
cores busy) and that its files fit a worker's memory, and large enough that the fixed cost of
a pass (a connection, the helper views, the rules' plan) is shared by many runs.
"""

from __future__ import annotations

import math
import os
from collections.abc import Generator
from pathlib import Path

from analyzer.runs.chunk_work import RunChunk, analyze_chunk
from analyzer.runs.executor import Executor, lost_table
from analyzer.runs.work import RunTables, RunTask, WorkSettings

CHUNKS_PER_WORKER = 3  # the last chunk of each worker is at most a third of its share
MAX_RUNS = 24  # past a few dozen small runs a pass costs no less per run, and its results wait longer
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


def run_chunked(
    tasks: list[RunTask], settings: WorkSettings, executor: Executor
) -> Generator[list[tuple[RunTask, RunTables]], None, None]:
    """Yield, as each chunk finishes, its runs' (task, tables); the runs of a chunk lost with its worker each
    give a failures row marked INFRASTRUCTURE (``executor.lost_table``)."""
    # an executor that does not say how many items it runs at once is taken for one worker
    workers = getattr(executor, "slots", 1)
    sizes = {t.export_path: export_bytes(t.export_path) for t in tasks}
    chunks = _largest_first(plan_chunks(tasks, workers, [sizes[t.export_path] for t in tasks]), sizes)
    for chunk, result in executor.completed(analyze_chunk, chunks, settings):
        if isinstance(result, BaseException):
            result = [lost_table(task, result) for task in chunk.tasks]
        yield list(zip(chunk.tasks, result, strict=True))
