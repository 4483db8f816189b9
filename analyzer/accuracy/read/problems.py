"""The problems met while reading a dump set or a reference: each names the file, the place and the problem."""

from __future__ import annotations

from pathlib import Path

from analyzer.ingest.model import Problem


class ReadProblems:
    """A problem log relative to the folder read (``root``), in the profile readers' Problem form."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.items: list[Problem] = []

    def name(self, path: Path) -> str:
        """A file as problems name it: relative to the folder above the one given."""
        try:
            return Path(path).relative_to(self.root).as_posix() or Path(path).name
        except ValueError:
            return str(path)

    def error(self, path: Path, where: str, problem: str, hint: str = "") -> None:
        """Something was lost: a file or a tensor could not be read (exit code 3)."""
        self.items.append(Problem(self.name(path), where, "error", problem, hint))

    def warning(self, path: Path, where: str, problem: str, hint: str = "") -> None:
        """Something to know that lost nothing (a file that is not a dump, left aside)."""
        self.items.append(Problem(self.name(path), where, "warning", problem, hint))


def reason(exc: BaseException) -> str:
    """An exception as a problem's text: an OSError's own words without the path (the problem names the file).

    >>> reason(FileNotFoundError(2, "No such file or directory", "/abs/x")), reason(ValueError("bad"))
    ('No such file or directory', 'bad')
    """
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)
