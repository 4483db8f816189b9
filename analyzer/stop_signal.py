"""A stop asked for by a signal (Ctrl-C, SIGTERM), recorded so that no error handler takes it for bad input.

A signal that arrives while DuckDB runs a query ends the query with DuckDB's own error
("Query interrupted"), not with the Python exception the handler raised; code that turns a
failed read or a failed rule into a problem asks ``stop_requested()`` first and lets a stop through.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager, suppress
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
def _handled_by(handler, signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[bool]:
    """While the block runs, ``handler`` takes ``signals`` (yields True) and the previous handlers come
    back afterwards; off the main thread, where no handler can be set, nothing changes (yields False)."""
    try:
        before = {s: signal.signal(s, handler) for s in signals}
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


# Ctrl-C reaches every process of the terminal's process group. A worker process (of a batch's pool or of
# its own Dask cluster) ignores it: the driver handles it by ending the workers, which would otherwise die
# with tracebacks of their own.


def ignore_ctrl_c() -> None:
    """This process ignores Ctrl-C from now on (a worker, as it starts); off the main thread nothing changes."""
    with suppress(ValueError):  # not the main thread
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def ctrl_c_ignored() -> Iterator[None]:
    """While the block runs, Ctrl-C is ignored, and so it is by the processes started in it from their first
    instruction (an ignored signal stays ignored across exec), not only once their initializer runs. A
    Ctrl-C in the block itself is lost; off the main thread nothing changes."""
    with _handled_by(signal.SIG_IGN, (signal.SIGINT,)):
        yield
