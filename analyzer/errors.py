"""The one base of the program's errors meant for the user (the file, the problem, the exit code), and the first
line of any error's message as problems and messages quote it."""

from __future__ import annotations

from pathlib import Path

USAGE_EXIT = 2  # bad usage, input that could not be used, an output that could not be written


class TriageError(Exception):
    """An error meant for the user: the file (or option) it is about, the problem, and the exit code of a
    command that stops on it. ``str()`` is ``file: problem`` (the problem alone when no file is named).
    The command line catches it once (``analyzer/cli``): one line on stderr, then its exit code."""

    exit_code = USAGE_EXIT

    def __init__(self, problem: str = "", file: Path | str = "") -> None:
        super().__init__(problem, str(file))  # both in args: the error survives a pickle (a batch worker's)
        self.problem, self.file = problem, str(file)

    def __str__(self) -> str:
        return f"{self.file}: {self.problem}" if self.file else self.problem


def first_line(error: BaseException | str, limit: int | None = 300) -> str:
    """The first line of an error's message, at most ``limit`` characters (None: the whole line); the error's
    type name when its message is empty. A message may be a page of context: problems quote its start.

    >>> first_line(ValueError("bad header\\nline 2: ...")), first_line(KeyError()), first_line("")
    ('bad header', 'KeyError', '')
    """
    text = str(error)
    fallback = "" if isinstance(error, str) else type(error).__name__
    return (text.splitlines() or [fallback])[0][:limit]
