"""Unpack .zip, .tar, .tar.gz and .tgz archives into a temporary folder, refusing entries that would escape it.

The archive itself is only read. An entry is refused when its name is absolute, climbs out with
``..``, or is a link (symbolic or hard) or a device file; the rest of the archive is still used
and every refused entry is named in the result.
"""

from __future__ import annotations

import shutil
import tarfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz")


class ArchiveError(Exception):
    """The archive cannot be read at all. The message is meant for the user."""


@dataclass
class Unpacked:
    """Where an archive was unpacked, and which entries were refused (with why)."""

    folder: Path
    refused: list[str] = field(default_factory=list)


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


def unpack(archive: Path, dest: Path) -> Unpacked:
    """Unpack ``archive`` into the empty folder ``dest``; raise ArchiveError when it is unreadable."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        if archive.name.lower().endswith(".zip"):
            return _unpack_zip(archive, dest)
        return _unpack_tar(archive, dest)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, OSError, ValueError) as exc:
        raise ArchiveError(f"archive could not be read: {type(exc).__name__}: {exc}") from exc


def _inside(dest: Path, name: str) -> Path | None:
    target = (dest / name).resolve()
    return target if target.is_relative_to(dest.resolve()) else None


def _unpack_zip(archive: Path, dest: Path) -> Unpacked:
    result = Unpacked(dest)
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            is_link = (info.external_attr >> 16) & 0o170000 == 0o120000
            reason = unsafe_reason(info.filename) or ("symbolic link" if is_link else None)
            target = None if reason else _inside(dest, info.filename)
            if target is None:
                result.refused.append(f"{info.filename} ({reason or 'escapes the folder'})")
                continue
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, target.open("wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
    return result


def _tar_reason(member: tarfile.TarInfo) -> str | None:
    if member.issym() or member.islnk():
        return "link"
    if not (member.isfile() or member.isdir()):
        return "special file"
    return unsafe_reason(member.name)


def _unpack_tar(archive: Path, dest: Path) -> Unpacked:
    result = Unpacked(dest)
    with tarfile.open(archive, "r:*") as tf:
        safe = []
        for member in tf:
            reason = _tar_reason(member)
            if reason is None and _inside(dest, member.name) is None:
                reason = "escapes the folder"
            if reason:
                result.refused.append(f"{member.name} ({reason})")
            else:
                safe.append(member)
        tf.extractall(dest, members=safe, filter="data")
    return result
