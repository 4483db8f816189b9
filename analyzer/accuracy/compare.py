"""Compare tensor pairs chunk by chunk on a thread pool (numpy releases the GIL), in bounded memory."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from analyzer.accuracy.metrics import Partial, chunk_partial, metrics
from analyzer.accuracy.pairing import Pair

BLOCK_ELEMENTS = 1 << 22  # read per task (one memory map), then worked through in cache-sized chunks
CHUNK_ELEMENTS = 1 << 16  # a chunk's float64 temporaries stay in the core's cache


def chunk_ranges(count: int, chunk: int = BLOCK_ELEMENTS) -> list[tuple[int, int]]:
    """[start, stop) ranges covering ``count`` elements.

    >>> chunk_ranges(5, 2)
    [(0, 2), (2, 4), (4, 5)]
    """
    return [(start, min(start + chunk, count)) for start in range(0, count, chunk)] or [(0, 0)]


def _block(pair: Pair, start: int, stop: int) -> Partial:
    # mapped, not copied: each chunk is copied once, into the thread's float64 buffers
    x, y = pair.dump.view(start, stop), pair.reference.view(start, stop)
    total = Partial()
    for a, b in chunk_ranges(stop - start, CHUNK_ELEMENTS):
        total.add(chunk_partial(x[a:b], y[a:b]))
    return total


def compare_pairs(pairs: list[Pair], threads: int | None = None) -> list[dict]:
    """The metrics of every pair, in the pairs' order; chunks of all pairs share one pool of threads."""
    threads = threads or min(os.cpu_count() or 1, 8)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        futures = [
            [pool.submit(_block, pair, start, stop) for start, stop in chunk_ranges(pair.dump.element_count)]
            for pair in pairs
        ]
        results = []
        for chunks in futures:
            total = Partial()
            for future in chunks:
                total.add(future.result())
            results.append(metrics(total))
    return results
