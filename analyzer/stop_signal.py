"""A stop asked for by a signal (Ctrl-C, SIGTERM), recorded so that no error handler takes it for bad input.

A signal that arrives while DuckDB runs a query ends the query with DuckDB's own error
("Query interrupted"), not with the Python exception the handler raised; code that turns a
failed read or a failed rule into a problem asks ``stop_requested()`` first and lets a stop through.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_received: int | None = None


def stop_requested() -> int | None:
    """The signal number of the stop asked for since ``stop_on_signals`` began, else None."""
    return _received


def _request_stop(signum: int, frame: FrameType | None) -> None:
    global _received
    _received = signum
    raise KeyboardInterrupt


@contextmanager
def _handled_by(handler) -> Iterator[bool]:
    """While the block runs, ``handler`` takes SIGINT and SIGTERM (yields True) and the previous handlers come
    back afterwards; off the main thread, where no handler can be set, nothing changes (yields False)."""
    try:
        before = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread
        yield False
        return
    try:
        yield True
    finally:
        for s, previous in before.items():
            signal.signal(s, previous)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """While the block runs, SIGINT and SIGTERM record the stop and raise KeyboardInterrupt (so that
    every ``finally`` and ``with`` runs: temporary folders are removed, worker processes ended); the
    previous handlers come back afterwards. Only the main thread can do this; elsewhere nothing changes."""
    global _received
    _received = None
    with _handled_by(_request_stop):
        yield


def _record_stop(signum: int, frame: FrameType | None) -> None:
    global _received
    _received = signum


@contextmanager
def stops_held() -> Iterator[None]:
    """While the block runs, a stop is recorded but not raised; it is raised as the block ends. For a start
    that cannot be cut halfway (a cluster whose processes are half started has no owner left to end them).
    Outside ``stop_on_signals``, or off the main thread, nothing changes."""
    if signal.getsignal(signal.SIGINT) is not _request_stop:
        yield
        return
    with _handled_by(_record_stop) as held:
        yield
    if held and _received is not None:
        raise KeyboardInterrupt
