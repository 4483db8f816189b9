"""Find the log files under a folder and say, from each path, which log it is (layout, rank, device, pid)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

# Names of text logs: *.log (also rotated: *.log.1), and the device's system logs that carry no suffix.
_LOG_NAME = re.compile(r"(\.log(\.\d+)?|^messages(\.\d+)?|^slogdlog(\.\d+)?|^syslog(\.\d+)?|\.txt)$")
_RANK_DIR = re.compile(r"^rank[_-]?(\d+)$", re.IGNORECASE)
# A worker-N / node-N folder is a machine of the job: it may hold several devices, each a rank of its own.
_NODE_DIR = re.compile(r"^(?:worker|node)[_-]?(\d+)$", re.IGNORECASE)
_DEVICE_DIR = re.compile(r"^(?:device|dev-os)-(\d+)$")
_NAME_PID = re.compile(r"^(?:plog|device(?:-app)?)-(\d+)(?:_\d+)?(?:\.log)?$")
_APP_DIR_PID = re.compile(r"^device-app-(\d+)$")
# Folders whose .txt files are not log records: asys' atrace/ holds trace dumps (ts_0_*.txt), not logs.
_NOT_LOG_TXT_DIRS = frozenset({"atrace"})


@dataclass(frozen=True)
class LogFile:
    """One file under the log folder, with what its path says about it."""

    path: Path  # absolute
    rel: str  # relative to the log folder, '/'-separated
    layout: str  # plog | device | device_os | hisi | install | other
    log_kind: str | None  # debug | run | security
    collection: str  # ascend_log | asys | slog | msnpureport | plain
    rank_id: int | None  # of a rank_N folder
    node_id: int | None  # of a worker-N / node-N folder
    device_id: int | None
    name_pid: int | None
    size_bytes: int


def _collection(parts: list[str]) -> str:
    if "dfx" in parts:
        return "asys"
    if "slog" in parts:
        return "slog"
    if any(p.startswith("dev-os-") for p in parts) or "hisi_logs" in parts:
        return "msnpureport"
    if "plog" in parts or any(_DEVICE_DIR.match(p) for p in parts):
        return "ascend_log"
    return "plain"


def _layout(parts: list[str], name: str) -> str:
    """Which log a file is, from the folders above it (nearest that says wins)."""
    folders = parts[:-1]
    if "hisi_logs" in folders:
        return "hisi"
    if any(p.startswith("dev-os-") for p in folders) or "device" in folders:
        return "device_os"
    if "plog" in folders or name.startswith("plog"):
        return "plog"
    if any(_DEVICE_DIR.match(p) for p in folders) or name.startswith("device-"):
        return "device"
    if any(p in ("install", "driver", "message", "ascend_seclog") for p in folders) or "install" in name:
        return "install"
    return "other"


def _number(pattern: re.Pattern, parts: list[str]) -> int | None:
    """The number of the innermost folder (or the file) matching ``pattern``."""
    for part in reversed(parts):
        if m := pattern.match(part):
            return int(m.group(1))
    return None


def classify(root: Path, path: Path, size: int) -> LogFile:
    """What ``path`` (under ``root``) is.

    >>> f = classify(Path("/j"), Path("/j/rank_3/debug/plog/plog-77_20240101010101001.log"), 10)
    >>> f.layout, f.log_kind, f.rank_id, f.name_pid, f.collection
    ('plog', 'debug', 3, 77, 'ascend_log')
    """
    parts = list(path.relative_to(root).parts)
    kind = next((p for p in reversed(parts[:-1]) if p in ("debug", "run", "security")), None)
    name_pid = _number(_NAME_PID, parts[-1:]) or _number(_APP_DIR_PID, parts[:-1])
    return LogFile(
        path=path,
        rel="/".join(parts),
        layout=_layout(parts, parts[-1]),
        log_kind=kind,
        collection=_collection(parts),
        rank_id=_number(_RANK_DIR, parts[:-1]),
        node_id=_number(_NODE_DIR, parts[:-1]),
        device_id=_number(_DEVICE_DIR, parts[:-1]),
        name_pid=name_pid,
        size_bytes=size,
    )


def is_log_name(rel_parts: tuple[str, ...]) -> bool:
    """Whether a file (its path's parts under the log folder) is a text log by its name and place.

    >>> is_log_name(("debug", "plog", "plog-1_2.log")), is_log_name(("atrace", "t", "ts_0_1_2.txt"))
    (True, False)
    """
    name = rel_parts[-1]
    if not _LOG_NAME.search(name):
        return False
    return not (name.endswith(".txt") and _NOT_LOG_TXT_DIRS.intersection(rel_parts[:-1]))


def find_log_files(root: Path) -> list[LogFile]:
    """Every text log under ``root`` (a file: itself), sorted by path; symlinked folders are not followed."""
    return scan_log_folder(root)[0]


def scan_log_folder(root: Path, loose: bool = False) -> tuple[list[LogFile], int]:
    """The text logs under ``root`` (see find_log_files) and how many other files it holds (not logs:
    binaries, trace dumps, kernel objects, ...); ``loose``: only the files directly in ``root`` (its
    sub-folders are collections of their own: collections.py)."""
    root = Path(root)
    if root.is_file():
        return [classify(root.parent, root, root.stat().st_size)], 0
    found, others = [], 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [] if loose else sorted(dirs)
        rel = Path(folder).relative_to(root).parts
        for name in sorted(files):
            path = Path(folder) / name
            if is_log_name((*rel, name)) and path.is_file():
                found.append(classify(root, path, path.stat().st_size))
            else:
                others += 1
    return sorted(found, key=lambda f: f.rel), others
