"""Compare tensor pairs block by block, in bounded memory: on this process's threads, and for a large comparison
on worker processes beside them (numpy releases the GIL per call, but two threads taking it back after every
call of a chunk spend more than they gain: a second core adds little through threads alone)."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

import numpy as np

from analyzer.accuracy.fast_chunk import COSINE_BOUND, cosine_bound
from analyzer.accuracy.metrics import Partial, chunk_partial, metrics
from analyzer.accuracy.pairing import Pair

BLOCK_ELEMENTS = 1 << 22  # read per task (one memory map), then worked through chunk by chunk
# A pair's sums add up chunk by chunk, in order: the chunk is part of the result, so it is one size whatever runs
# it (one thread, threads sharing the GIL, a worker process); threads taking it back after every call of small
# chunks would spend more than they gain, and one thread alone is no slower with chunks this size.
CHUNK_ELEMENTS = 1 << 19
# Worker processes start in about 0.2 s of CPU each (spawn: a fresh interpreter importing numpy and analyzer):
# worth it from this many elements of plain-layout tensors (read through memory maps by the worker itself).
PROCESS_MIN_ELEMENTS = 1 << 27
IN_FLIGHT = 2  # blocks queued per worker, so that none waits for the next one


def chunk_ranges(count: int, chunk: int | None = None) -> list[tuple[int, int]]:
    """[start, stop) ranges covering ``count`` elements, ``chunk`` (default BLOCK_ELEMENTS) at a time.

    >>> chunk_ranges(5, 2)
    [(0, 2), (2, 4), (4, 5)]
    """
    chunk = chunk or BLOCK_ELEMENTS  # read when called: a test may set BLOCK_ELEMENTS
    return [(start, min(start + chunk, count)) for start in range(0, count, chunk)] or [(0, 0)]


def _block(pair: Pair, start: int, stop: int, exact: bool, chunk: int) -> Partial:
    # mapped, not copied (plain arrays over the maps: a memmap slice per chunk costs its own bookkeeping)
    x, y = np.asarray(pair.dump.view(start, stop)), np.asarray(pair.reference.view(start, stop))
    total = Partial()
    for a, b in chunk_ranges(stop - start, chunk):
        total.add(chunk_partial(x[a:b], y[a:b], exact))
    return total


def compare_pairs(pairs: list[Pair], threads: int | None = None) -> list[dict]:
    """The metrics of every pair, in the pairs' order. A pair whose float32 sums cannot bound its cosine's error
    within COSINE_BOUND is summed again in float64."""
    threads = threads or min(os.cpu_count() or 1, 8)
    totals = _totals(pairs, False, threads)
    again = [i for i, total in enumerate(totals) if total.fast_count and cosine_bound(total) > COSINE_BOUND]
    if again:
        for i, total in zip(again, _totals([pairs[i] for i in again], True, threads), strict=True):
            totals[i] = total
    return [metrics(total) for total in totals]


def _blocks(pair: Pair) -> list[tuple[int, int]]:
    """The pair's blocks; one for a device format, which is read and converted whole at each block it serves."""
    count = pair.dump.element_count
    return chunk_ranges(count, count) if pair.dump.is_converted or pair.reference.is_converted else chunk_ranges(count)


def _mapped(pair: Pair) -> bool:
    """True when a worker process can read the pair itself: both sides are plain layouts in files."""
    return all(s.loaded is None and not s.is_converted for s in (pair.dump, pair.reference))


def _totals(pairs: list[Pair], exact: bool, threads: int) -> list[Partial]:
    """Each pair's combined sums, its blocks combined in order (whatever the workers' timing)."""
    units = [(i, start, stop) for i, pair in enumerate(pairs) for start, stop in _blocks(pair)]
    mapped = sum(pair.dump.element_count for pair in pairs if _mapped(pair))
    spawns = not multiprocessing.current_process().daemon  # a daemon process may not start children
    processes = threads - 1 if threads > 1 and mapped >= PROCESS_MIN_ELEMENTS and spawns else 0
    results: dict[tuple[int, int, int], Partial] = {}
    with ThreadPoolExecutor(max_workers=threads - processes) as local:
        if processes:
            try:
                with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn")) as remote:
                    _run(pairs, units, exact, [(local, threads - processes, False), (remote, processes, True)], results)
            except (BrokenProcessPool, OSError):  # no worker could start (say, a script without a __main__ guard)
                pass
        _run(pairs, [u for u in units if u not in results], exact, [(local, threads - processes, False)], results)
    totals = [Partial() for _ in pairs]
    for unit in units:
        totals[unit[0]].add(results[unit])
    return totals


def _run(pairs: list[Pair], units: list, exact: bool, executors: list, results: dict) -> None:
    """Hand the units to the executors (executor, workers, takes only mapped pairs) as each frees a place: the
    threads take the units a worker process cannot read first."""
    mapped = [u for u in reversed(units) if _mapped(pairs[u[0]])]  # last first: popped from the end
    others = [u for u in reversed(units) if not _mapped(pairs[u[0]])]
    running: dict[Future, tuple[Executor, tuple]] = {}
    while mapped or others or running:
        for executor, workers, mapped_only in executors:
            stacks = (mapped,) if mapped_only else (others, mapped)
            busy = sum(1 for ex, _ in running.values() if ex is executor)
            for _ in range(workers * IN_FLIGHT - busy):
                stack = next((st for st in stacks if st), None)
                if stack is None:
                    break
                unit = stack.pop()
                # the chunk read here, in the parent: a worker process has the module's own (a test may set it)
                running[executor.submit(_block, pairs[unit[0]], *unit[1:], exact, CHUNK_ELEMENTS)] = (executor, unit)
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in done:
            results[running.pop(future)[1]] = future.result()
