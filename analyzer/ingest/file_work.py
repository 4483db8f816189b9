"""The per-file Python work of many exports (looking at heads and tails, parsing small JSON files, hashing
samples) spread over threads: most of it waits on file reads, which release the interpreter."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from analyzer.execution.threads import cores, thread_count

T = TypeVar("T")
R = TypeVar("R")


def each(work: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``work`` of every item, in the items' order; ``work`` must touch nothing shared (no connection)."""
    items = list(items)
    workers = min(thread_count() or cores(), len(items))
    if workers <= 1:
        return [work(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(work, items))
