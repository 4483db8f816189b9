"""DuckDB's worker threads: DuckDB's own default (one per core), or one fixed count per process.

The count is, in order: the command line's ``--threads``, the environment variable
``NPU_TRIAGE_THREADS``, else DuckDB's default. Every connection of the process uses it, but for a small
export read without a count set, which is read and judged on one thread (``small_input_threads``). A batch of N
worker processes gives each an N-th of the cores unless a count was set, so that N DuckDBs do not
each start a thread per core and take turns on the same cores.
"""

from __future__ import annotations

import os
from pathlib import Path

from analyzer.errors import TriageError

ENV = "NPU_TRIAGE_THREADS"


class ThreadCountError(TriageError, ValueError):
    """A thread count that is not a positive whole number; the message names where it came from."""


def parse_threads(text: str, source: str) -> int:
    """The count in ``text``; ``source`` names where it came from (an option or the environment variable).

    >>> parse_threads(" 4 ", "--threads")
    4
    """
    try:
        count = int(text.strip())
    except ValueError:
        count = 0
    if count < 1:
        raise ThreadCountError(f"{source}: {text!r} is not a thread count (write a whole number, 1 or more)")
    return count


def thread_count(option: str | None = None) -> int | None:
    """The count in force: ``option`` (the command line's), else the environment variable, else None
    (DuckDB's default). Raises ThreadCountError naming the option or variable when it is not a count."""
    if option is not None:
        return capped(parse_threads(option, "--threads"), "--threads")[0]
    env = os.environ.get(ENV, "").strip()
    return capped(parse_threads(env, ENV), ENV)[0] if env else None


# Below this many bytes of files, an export fills no table past a row group or two, which DuckDB scans on one
# thread anyway: a second thread only adds the hand-offs of its tasks to every one of a diagnosis's
# hundred-odd small statements.
SMALL_INPUT_BYTES = 4 * 2**20


def small_input_threads(path: Path) -> int | None:
    """1 when no count is set (``thread_count``) and the files under ``path`` (a file, or a folder walked
    until they pass SMALL_INPUT_BYTES) hold fewer bytes than that; else None (the count in force)."""
    if thread_count() is not None:
        return None
    total, folders = 0, [path]
    while folders:
        try:
            entries = list(os.scandir(folders.pop()))
        except NotADirectoryError:
            return 1 if path.stat().st_size < SMALL_INPUT_BYTES else None
        except OSError:
            return None
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(Path(entry.path))
                elif entry.is_file():
                    total += entry.stat().st_size
            except OSError:  # a link that loops, a file gone since the listing: the scan of the input names it
                continue
            if total >= SMALL_INPUT_BYTES:
                return None
    return 1


def cores() -> int:
    """The machine's cores (at least 1)."""
    return max(1, os.cpu_count() or 1)


def capped(count: int, source: str) -> tuple[int, str | None]:
    """``count`` at most the machine's cores, and a note when it was more: more DuckDB threads than cores
    only take turns on them (a count of 100,000 starts so many threads that the process cannot end).

    >>> capped(1, "--threads")
    (1, None)
    """
    if count <= cores():
        return count, None
    return cores(), f"{source} {count} is more than this machine's {cores()} cores: {cores()} threads are used"


def core_share(workers: int) -> int:
    """Each one's share of the machine's cores when ``workers`` processes run side by side (at least 1).

    >>> core_share(10**6)
    1
    """
    return max(1, (os.cpu_count() or 1) // max(1, workers))


def worker_thread_count(workers: int) -> int:
    """The count each of ``workers`` processes running side by side uses: the set count, else its share
    of the cores."""
    return thread_count() or core_share(workers)
