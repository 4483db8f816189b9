"""Logs found beside an export: the CANN log tree inside or next to an export folder (used without --logs)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from analyzer.logs.layout import find_log_files

# Folders holding a log tree, looked for inside the export folder, then beside it (in its parent): what
# ASCEND_PROCESS_LOG_PATH is commonly set to, the copy of ~/ascend/log, and asys collections.
NAMES = ("log", "logs", "ascend/log")
PATTERNS = ("asys_output_*",)


@dataclass(frozen=True)
class FoundLogs:
    """A log folder found beside some exports, the run id its records get, and the exports' folders."""

    logdir: Path
    run_id: str
    exports: tuple[Path, ...]


def _candidates(folder: Path) -> list[Path]:
    named = [folder / n for n in NAMES]
    return named + sorted(p for pattern in PATTERNS for p in folder.glob(pattern))


def logs_beside(export: Path) -> Path | None:
    """The first folder of NAMES / PATTERNS inside ``export``, else beside it, that holds a log file; else None.

    >>> logs_beside(Path("/nonexistent/x_ascend_pt")) is None
    True
    """
    export = Path(export).resolve()
    for folder in (export, export.parent):
        for candidate in _candidates(folder):
            if candidate.is_dir() and not candidate.is_symlink() and find_log_files(candidate):
                return candidate
    return None


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
    """The log folders beside these export folders, each once with the exports that share it, by path."""
    shared: dict[Path, list[Path]] = {}
    for export in exports:
        if (logdir := logs_beside(export)) is not None:
            shared.setdefault(logdir, []).append(Path(export))
    folders = sorted(shared)
    return [FoundLogs(d, r, tuple(shared[d])) for d, r in zip(folders, _run_ids(folders), strict=True)]
