"""Compare tensor pairs chunk by chunk on a thread pool (numpy releases the GIL), in bounded memory."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from analyzer.accuracy.fast_chunk import COSINE_BOUND, cosine_bound
from analyzer.accuracy.metrics import Partial, chunk_partial, metrics
from analyzer.accuracy.pairing import Pair

BLOCK_ELEMENTS = 1 << 22  # read per task (one memory map), then worked through in cache-sized chunks
CHUNK_ELEMENTS = 1 << 16  # one thread: a chunk's temporaries stay in the core's cache
# Several threads: each numpy call releases the GIL and takes it back; on chunks this small, the threads spend
# more time handing the GIL over than they gain, so each works through larger chunks (fewer calls per element).
SHARED_CHUNK_FACTOR = 8


def chunk_ranges(count: int, chunk: int = BLOCK_ELEMENTS) -> list[tuple[int, int]]:
    """[start, stop) ranges covering ``count`` elements.

    >>> chunk_ranges(5, 2)
    [(0, 2), (2, 4), (4, 5)]
    """
    return [(start, min(start + chunk, count)) for start in range(0, count, chunk)] or [(0, 0)]


def _block(pair: Pair, start: int, stop: int, exact: bool, chunk: int) -> Partial:
    # mapped, not copied (plain arrays over the maps: a memmap slice per chunk costs its own bookkeeping)
    x, y = np.asarray(pair.dump.view(start, stop)), np.asarray(pair.reference.view(start, stop))
    total = Partial()
    for a, b in chunk_ranges(stop - start, chunk):
        total.add(chunk_partial(x[a:b], y[a:b], exact))
    return total


def compare_pairs(pairs: list[Pair], threads: int | None = None) -> list[dict]:
    """The metrics of every pair, in the pairs' order; chunks of all pairs share one pool of threads. A pair
    whose float32 sums cannot bound its cosine's error within COSINE_BOUND is summed again in float64."""
    threads = threads or min(os.cpu_count() or 1, 8)
    chunk = CHUNK_ELEMENTS if threads == 1 else CHUNK_ELEMENTS * SHARED_CHUNK_FACTOR
    with ThreadPoolExecutor(max_workers=threads) as pool:
        totals = _totals(pool, pairs, False, chunk)
        again = [i for i, total in enumerate(totals) if total.fast_count and cosine_bound(total) > COSINE_BOUND]
        for i, total in zip(again, _totals(pool, [pairs[i] for i in again], True, chunk), strict=True):
            totals[i] = total
    return [metrics(total) for total in totals]


def _totals(pool: ThreadPoolExecutor, pairs: list[Pair], exact: bool, chunk: int) -> list[Partial]:
    """Each pair's combined sums, its blocks combined in order (whatever the threads' timing)."""
    futures = [
        [pool.submit(_block, pair, start, stop, exact, chunk) for start, stop in chunk_ranges(pair.dump.element_count)]
        for pair in pairs
    ]
    totals = []
    for blocks in futures:
        total = Partial()
        for future in blocks:
            total.add(future.result())
        totals.append(total)
    return totals
