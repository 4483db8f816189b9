"""Atomic output files: write beside the target under a temporary name, then rename over it."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from analyzer.errors import TriageError, first_line


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_current_umask()


class OutputError(TriageError):
    """An output could not be written (a full disk, a read-only folder); the message names the output."""


def output_error(path: Path, exc: BaseException) -> OutputError:
    """The OutputError of ``path`` for the failure ``exc`` (an OSError's reason, else its first line)."""
    reason = getattr(exc, "strerror", None) or first_line(exc)
    return OutputError(f"{path}: could not be written: {reason}")


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block succeeds it replaces ``path``.

    A crash or kill inside the block leaves ``path`` as it was (old content or absent), never
    half-written. The final file gets the usual permissions (0666 less the umask), not
    mkstemp's 0600.
    """
    path = Path(path)
    fd, tmp = _temporary(path)
    os.close(fd)
    with _replacing(tmp, path):
        yield Path(tmp)


def write_text_atomically(path: Path, text: str) -> Path:
    """Write UTF-8 text (LF line ends) to ``path`` atomically, as ``atomic_path`` does; returns ``path``.
    The text goes through the temporary file's own descriptor, opened once."""
    path = Path(path)
    data = text.encode("utf-8")
    fd, tmp = _temporary(path)
    with _replacing(tmp, path), open(fd, "wb") as file:
        file.write(data)
    return path


def _temporary(path: Path) -> tuple[int, str]:
    """A new temporary file beside ``path``: its descriptor and path. Its folder is made (with its parents) only
    when it is not there, so the files of one folder make it once."""
    try:
        try:
            return tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            return tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise output_error(path, exc) from None


@contextmanager
def _replacing(tmp: str, path: Path) -> Iterator[None]:
    """The temporary file ``tmp``, once the block has written it, renamed over ``path``; removed otherwise."""
    try:
        yield
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
    except OSError as exc:  # the block only writes the temporary file: this is an output failure
        raise OutputError(f"{output_error(path, exc)} (an earlier {path.name}, if any, is unchanged)") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
