"""Profiling data collected but never exported, and the command that exports it: the note of a folder in which
discovery finds no export.

msprof writes its raw collection as ``PROF_*/device_*/data`` and ``PROF_*/host/data``; ``msprof --export=on`` parses
it into ``PROF_*/mindstudio_profiler_output``. The Ascend PyTorch profiler writes ``*_ascend_pt`` (``_ascend_ms`` for
MindSpore) and, without ``on_trace_ready`` parsing, no ``ASCEND_PROFILER_OUTPUT`` until its offline ``analyse`` runs.
An output folder that is there but empty (an export or parse stopped before its first file) counts as absent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from analyzer.ingest.metadata.discover import APO, MSO, printable

# Folders looked into below the path given: a job's tree holds its ranks' collections two or three levels down.
_DEPTH = 3


def _names(folder: Path) -> set[str]:
    try:
        with os.scandir(folder) as entries:
            return {e.name for e in entries if e.is_dir(follow_symlinks=False)}
    except OSError:
        return set()


def folders_below(path: Path, depth: int) -> Iterator[tuple[Path, set[str]]]:
    """``path`` and the folders up to ``depth`` levels below it (links not followed), level by level and in path
    order within a level, each with the names of its subfolders."""
    level = [path]
    for _ in range(depth + 1):
        below: list[Path] = []
        for folder in sorted(level):
            names = _names(folder)
            yield folder, names
            below += [folder / n for n in names]
        level = below


def _holds(folder: Path, names: set[str], output: str) -> bool:
    """Whether ``folder`` has its output folder ``output`` with something in it."""
    if output not in names:
        return False
    try:
        with os.scandir(folder / output) as entries:
            return any(True for _ in entries)
    except OSError:
        return True  # there but unreadable: discovery reports it, no export to suggest


def _raw_msprof(folder: Path, names: set[str]) -> bool:
    """A PROF_* folder holding collected data (device_*/data or host/data) and no export of it."""
    if not folder.name.startswith("PROF_") or _holds(folder, names, MSO):
        return False
    return any((n.startswith("device_") or n == "host") and (folder / n / "data").is_dir() for n in names)


def _raw_framework(folder: Path, names: set[str]) -> bool:
    """A *_ascend_pt / *_ascend_ms folder of the framework's profiler without its parsed output."""
    return folder.name.endswith(("_ascend_pt", "_ascend_ms")) and not _holds(folder, names, APO)


def unexported(path: Path) -> list[tuple[Path, str]]:
    """The collections under ``path`` (itself included, ``_DEPTH`` levels down) never exported, in path order, each
    with its kind: 'msprof' or 'framework'. A framework collection's own PROF_* folder is not listed again."""
    found: list[tuple[Path, str]] = []
    for folder, names in folders_below(path, _DEPTH):
        if any(f in folder.parents for f, _ in found):
            continue  # inside a collection already found
        if _raw_framework(folder, names):
            found.append((folder, "framework"))
        elif _raw_msprof(folder, names):
            found.append((folder, "msprof"))
    return found


def unexported_note(path: Path) -> str:
    """What to run when ``path`` holds collections but no export: '' when it holds none."""
    found = unexported(path)
    if not found:
        return ""
    folder, kind = found[0]
    more = f" ({len(found)} such folders; first: {printable(folder)})" if len(found) > 1 else f": {printable(folder)}"
    if kind == "msprof":
        how = f"export it with `msprof --export=on --output={printable(folder)}` (CANN's msprof)"
    else:
        how = (
            "parse it with the profiler's offline analyse: `python3 -c \"from torch_npu.profiler.profiler import "
            f"analyse; analyse(profiler_path='{printable(folder.parent)}')\"` (MindSpore: mindspore.profiler.profiler)"
        )
    return (
        f"; it holds profiling data collected but never exported (no export folder, or an empty one){more}: {how}, "
        "then give npu-triage that folder"
    )
