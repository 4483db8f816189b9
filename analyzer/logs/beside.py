"""Logs found beside an export: the CANN log collections inside or next to an export folder (used without --logs)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from analyzer.logs.collections import Collection, find_collections, holds_logs

# Folders holding a log tree, looked for inside the export folder, then beside it (in its parent): what
# ASCEND_PROCESS_LOG_PATH is commonly set to, the copy of ~/ascend/log, and asys collections.
NAMES = ("log", "logs", "ascend/log")
PATTERNS = ("asys_output_*",)


@dataclass(frozen=True)
class FoundLogs:
    """A log collection found beside some exports, the run id its records get, and the exports' folders
    (``loose``: only the log files directly in ``logdir``, its sub-folders being collections of their own)."""

    logdir: Path
    run_id: str
    exports: tuple[Path, ...]
    loose: bool = False


def _holding_logs(folder: Path) -> list[Path]:
    """The folders of NAMES, then (all together) those of PATTERNS, in ``folder``, that hold a log file: the
    first group found (``holds_logs`` stops at the first log file: no classifying of the whole tree)."""
    named = [[folder / n] for n in NAMES]
    for group in (*named, sorted(p for pattern in PATTERNS for p in folder.glob(pattern))):
        found = [c for c in group if c.is_dir() and not c.is_symlink() and holds_logs(c)]
        if found:
            return found
    return []


def _collections_in(folder: Path) -> list[Collection]:
    """The log collections of the first group of ``_holding_logs(folder)``; none when it has none."""
    return [c for logdir in _holding_logs(folder) for c in find_collections(logdir, logdir.name)]


def logs_beside(export: Path, seen: dict[Path, list[Collection]] | None = None) -> list[Collection]:
    """The log collections (collections.py) of the first folder of NAMES inside ``export``, else of all its
    asys_output_* folders, else the same beside it (in its parent); else none. ``seen``: each folder's
    collections already looked for (exports sharing a parent search it once).

    >>> logs_beside(Path("/nonexistent/x_ascend_pt"))
    []
    """
    export = Path(export).resolve()
    seen = {} if seen is None else seen
    for folder in (export, export.parent):
        if folder not in seen:
            seen[folder] = _collections_in(folder)
        if seen[folder]:
            return seen[folder]
    return []


def _run_ids(folders: list[Path]) -> list[str]:
    """Each folder's name, or, when two share a name (rank_0/log, rank_1/log), its path below the folders'
    common parent joined by '-'.

    >>> _run_ids([Path("/j/rank_0/log"), Path("/j/rank_1/log"), Path("/j/asys_output_1")])
    ['rank_0-log', 'rank_1-log', 'asys_output_1']
    """
    names = [d.name for d in folders]
    if len(set(names)) == len(names):
        return names
    common = Path(os.path.commonpath(folders)) if len(folders) > 1 else folders[0].parent
    return [
        n if names.count(n) == 1 else "-".join(d.relative_to(common).parts) for d, n in zip(folders, names, strict=True)
    ]


def found_logs(exports: Iterable[Path]) -> list[FoundLogs]:
    """The log collections beside these export folders, each once with the exports that share it, by path."""
    shared: dict[tuple[Path, bool], list[Path]] = {}
    seen: dict[Path, list[Collection]] = {}
    for export in exports:
        for c in logs_beside(export, seen):
            shared.setdefault((c.root, c.loose), []).append(Path(export))
    keys = sorted(shared)
    ids = _run_ids([d for d, _ in keys])
    return [FoundLogs(d, r, tuple(shared[d, loose]), loose) for (d, loose), r in zip(keys, ids, strict=True)]
