"""Progress of long work on stderr (runs done / total, the current one), only when stderr is a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from analyzer.cli.console import VisibleConsole

# Its own console: rich's live display must own the stream it rewrites; the messages of console.err pass through it.
_console = VisibleConsole(stderr=True, highlight=False)


class RunProgress:
    """One bar: `step(label)` when a run starts, `done()` when it ends; inert when stderr is not a terminal."""

    def __init__(self, progress: Progress, task: TaskID, what: str) -> None:
        self._progress, self._task, self._what = progress, task, what
        self._started = False

    def step(self, label: str) -> None:
        """A run starts: the one before it (if any) is done."""
        advance = 1 if self._started else 0
        self._started = True
        self._progress.update(self._task, advance=advance, description=f"{self._what}: {label}"[:60])

    def done(self, text: str) -> None:
        """One more run done (work finishing in any order, as a batch's workers do)."""
        self._progress.update(self._task, advance=1, description=text[:60])

    def phase(self, what: str, total: int) -> None:
        """The same bar, restarted for the next pass over the runs (reading, then judging)."""
        self._what, self._started = what, False
        self._progress.reset(self._task, total=total, description=what)


def progress_shown() -> bool:
    return _console.is_terminal


@contextmanager
def run_progress(what: str, total: int) -> Iterator[RunProgress]:
    """A transient bar on stderr for the length of the block; nothing at all into a pipe or a file."""
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_console,
        transient=True,
        # stdout printed meanwhile goes above the bar when both are the terminal; a piped stdout is left alone
        redirect_stdout=sys.stdout.isatty(),
        disable=not _console.is_terminal,
    )
    with progress:
        yield RunProgress(progress, progress.add_task(what, total=total), what)
