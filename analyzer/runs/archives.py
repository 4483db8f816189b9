"""Unpack .zip, .tar, .tar.gz and .tgz archives into a temporary folder: only what readers use, within limits.

The archive itself is only read. Each entry is streamed, and only the files a reader takes (the
names ``ingest.discover`` looks for, and metadata) are written; the rest is skipped unread. An
entry is refused when its name is absolute, climbs out with ``..``, is a link (symbolic or hard)
or a device file, or clashes with an entry already unpacked (a second file of the same name, a
file where a folder is, or the reverse); the rest of the archive is still used and every refused
entry is named in the result. Unpacking stops, and the archive is refused, once the bytes written
pass ``Limits.total_bytes`` or ``Limits.ratio`` times the archive's own size (a zip bomb).
Messages name the archive and the entry, never the temporary folder.
"""

from __future__ import annotations

import shutil
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath
from typing import IO

from analyzer.errors import TriageError
from analyzer.ingest.metadata.discover import is_read_file

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz")
_CHUNK = 1 << 20


class ArchiveError(TriageError):
    """The archive cannot be used at all. The message is meant for the user."""


@dataclass(frozen=True)
class Limits:
    """How much unpacking one archive may write: at most ``total_bytes``, and at most ``ratio`` times
    the archive's own size."""

    total_bytes: int = 64 << 30
    ratio: float = 200.0


DEFAULT_LIMITS = Limits()


@dataclass
class Unpacked:
    """Where an archive was unpacked, which entries were refused (with why) and how many were skipped."""

    folder: Path
    refused: list[str] = field(default_factory=list)
    skipped: int = 0  # entries no reader uses, not written


def is_archive(path: Path) -> bool:
    """True for a file named like an archive we can unpack.

    >>> is_archive(Path("runs.tar.gz")), is_archive(Path("run.json"))
    (True, False)
    """
    name = path.name.lower()
    return any(name.endswith(s) for s in ARCHIVE_SUFFIXES)


def unsafe_reason(name: str) -> str | None:
    """Why an entry name would escape the extraction folder, or None when it is safe.

    >>> unsafe_reason("run/a.csv"), unsafe_reason("../x"), unsafe_reason("/etc/passwd")
    (None, "climbs out with '..'", 'absolute path')
    """
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return "absolute path"
    if ".." in PurePosixPath(name.replace("\\", "/")).parts:
        return "climbs out with '..'"
    return None


@dataclass(frozen=True)
class _Entry:
    name: str
    reason: str | None  # why it is refused whatever its place, or None
    is_dir: bool
    open: Callable[[], IO[bytes]]  # a readable binary stream


def unpack(archive: Path, dest: Path, limits: Limits = DEFAULT_LIMITS) -> Unpacked:
    """Unpack ``archive`` into the empty folder ``dest``; raise ArchiveError (naming the archive, and the
    entry when there is one) when it is unreadable or passes the limits, leaving no ``dest`` behind."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        return _unpack_all(archive, dest, limits)
    except ArchiveError:
        shutil.rmtree(dest, ignore_errors=True)  # a refused archive leaves nothing half unpacked
        raise


def _unpack_all(archive: Path, dest: Path, limits: Limits) -> Unpacked:
    budget = _Budget(archive, limits)
    result = Unpacked(dest)
    entry = None
    try:
        for entry in _entries(archive):
            _unpack_entry(entry, dest, result, budget)
    except ArchiveError:
        raise
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, OSError, ValueError) as exc:
        where = f" at entry {entry.name!r}" if entry is not None else ""
        reason = getattr(exc, "strerror", None) or str(exc).split(": '/", 1)[0]
        raise ArchiveError(f"{archive.name}: could not be read{where}: {type(exc).__name__}: {reason}") from None
    return result


def _entries(archive: Path) -> Iterator[_Entry]:
    if archive.name.lower().endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                is_link = (info.external_attr >> 16) & 0o170000 == 0o120000
                reason = unsafe_reason(info.filename) or ("symbolic link" if is_link else None)
                yield _Entry(info.filename, reason, info.is_dir(), partial(zf.open, info))
        return
    with tarfile.open(archive, "r:*") as tf:
        for member in tf:
            yield _Entry(member.name, _tar_reason(member), member.isdir(), partial(_member_stream, tf, member))


def _member_stream(tf: tarfile.TarFile, member: tarfile.TarInfo) -> IO[bytes]:
    stream = tf.extractfile(member)
    if stream is None:  # a member with no data of its own; _tar_reason refuses those before they are opened
        raise ArchiveError(f"{member.name}: not a regular file")
    return stream


def _tar_reason(member: tarfile.TarInfo) -> str | None:
    if member.issym() or member.islnk():
        return "link"
    if not (member.isfile() or member.isdir()):
        return "special file"
    return unsafe_reason(member.name)


def _unpack_entry(entry: _Entry, dest: Path, result: Unpacked, budget: _Budget) -> None:
    target = None if entry.reason else _inside(dest, entry.name)
    if target is None:
        result.refused.append(f"{entry.name} ({entry.reason or 'escapes the folder'})")
        return
    if entry.is_dir:
        return  # folders are made for the files that are written
    if not is_read_file(target.name):
        result.skipped += 1
        return
    clash = _clash(target, dest)
    if clash:
        result.refused.append(f"{entry.name} ({clash})")
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    with entry.open() as src, target.open("xb") as out:
        _copy(src, out, budget, entry.name)


def _inside(dest: Path, name: str) -> Path | None:
    target = (dest / name).resolve()
    return target if target.is_relative_to(dest.resolve()) else None


def _clash(target: Path, dest: Path) -> str | None:
    """Why ``target`` cannot be written beside what is already unpacked, or None."""
    if target.exists():
        return "a folder of the same name is in the archive" if target.is_dir() else "a second entry of the same name"
    parent = target.parent
    while parent != dest and not parent.exists():
        parent = parent.parent
    if parent != dest and not parent.is_dir():
        return f"{parent.relative_to(dest).as_posix()} is a file in the archive, not a folder"
    return None


class _Budget:
    """The bytes an archive may still write, counted as they are written."""

    def __init__(self, archive: Path, limits: Limits) -> None:
        self.archive, self.limits = archive, limits
        self.allowed = min(limits.total_bytes, int(limits.ratio * max(archive.stat().st_size, 1)))
        self.written = 0

    def take(self, n: int, entry: str) -> None:
        self.written += n
        if self.written > self.allowed:
            raise ArchiveError(
                f"{self.archive.name}: refused at entry {entry!r}: unpacking passes "
                f"{_size(self.allowed)} (the limit is {_size(self.limits.total_bytes)} in all and "
                f"{self.limits.ratio:g} times the archive's size; raise them with --max-unpacked and "
                "--max-unpack-ratio)"
            )


def _copy(src: IO[bytes], out: IO[bytes], budget: _Budget, entry: str) -> None:
    while chunk := src.read(_CHUNK):
        budget.take(len(chunk), entry)
        out.write(chunk)


def _size(n: int) -> str:
    """
    >>> _size(5 << 30), _size(1536)
    ('5.0 GiB', '1.5 KiB')
    """
    value, unit = float(n), "B"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            break
        value /= 1024
    return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
