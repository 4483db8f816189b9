"""The log collections in a folder: which sub-trees are independent collections, each judged on its own."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from analyzer.logs.layout import is_log_name

_RANK_DIR = re.compile(r"^(?:rank|worker|node)[_-]?\d+$", re.IGNORECASE)
_DEVICE_DIR = re.compile(r"^device-\d+$")
_KIND_DIRS = ("debug", "run", "security")


@dataclass(frozen=True)
class Collection:
    """One log collection: the folder judged as one run (``loose``: only the log files directly in it, the
    sub-folders being collections of their own), and its run id."""

    root: Path
    run_id: str
    loose: bool = False


def _subdirs(folder: Path) -> list[Path]:
    """The folders in ``folder``, sorted; symlinked folders are not followed (as find_log_files)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    return [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]


def _holds_ascend_log(names: set[str], folder: Path) -> bool:
    """~/ascend/log, $ASCEND_PROCESS_LOG_PATH: plog/ or device-N/, directly or under debug|run|security/."""
    if "plog" in names or any(_DEVICE_DIR.match(n) for n in names):
        return True
    return any(k in names and _holds_ascend_log({d.name for d in _subdirs(folder / k)}, folder / k) for k in _KIND_DIRS)


def is_collection_root(folder: Path) -> bool:
    """Whether ``folder`` is the root of one log collection, by what it holds: an ~/ascend/log-style tree
    (plog/ or device-N/, directly or under debug|run|security/), an asys collection (named asys_output_*,
    or holding dfx/), a legacy tree (holding slog/), an msnpureport export (holding dev-os-N/ or hisi_logs/),
    or a job: rank_N/, worker-N/, node-N/ folders each holding one of these.

    >>> is_collection_root(Path("/nonexistent/asys_output_20240912"))
    True
    """
    folder = Path(folder)
    if folder.name.startswith("asys_output_"):
        return True
    subdirs = _subdirs(folder)
    names = {d.name for d in subdirs}
    if names & {"dfx", "slog", "hisi_logs"} or any(n.startswith("dev-os-") for n in names):
        return True
    if _holds_ascend_log(names, folder):
        return True
    return any(_RANK_DIR.match(d.name) and _roots_below(d, 1) for d in subdirs)


def _roots_below(folder: Path, enough: int) -> int:
    """How many collection roots ``folder`` is or holds (not looking inside a root), counted up to ``enough``."""
    if is_collection_root(folder):
        return 1
    count = 0
    for sub in _subdirs(folder):
        count += _roots_below(sub, enough - count)
        if count >= enough:
            break
    return count


def holds_logs(folder: Path) -> bool:
    """Whether there is a log file anywhere under ``folder`` (stops at the first)."""
    for sub, dirs, files in os.walk(folder):
        dirs.sort()
        rel = Path(sub).relative_to(folder).parts
        if any(is_log_name((*rel, f)) and os.path.isfile(os.path.join(sub, f)) for f in files):
            return True
    return False


def _loose_logs(folder: Path) -> bool:
    """Whether ``folder`` holds a log file directly (not in a sub-folder)."""
    return any(is_log_name((p.name,)) and p.is_file() for p in folder.iterdir())


def _split(folder: Path) -> list[tuple[Path, bool]]:
    """The parts of ``folder`` judged apart: itself when it holds one collection or none, else each
    sub-folder's parts (and its own log files, as a loose part)."""
    if _roots_below(folder, 2) < 2:
        return [(folder, False)] if holds_logs(folder) else []
    parts = [(folder, True)] if _loose_logs(folder) else []
    for sub in _subdirs(folder):
        parts += _split(sub)
    return parts


def _run_ids(top: Path, top_id: str, roots: list[Path]) -> list[str]:
    """Each part's folder name (``top_id`` for ``top``), or, when two share a name, its path below ``top``
    joined by '-'; a clash left (a folder named as its parent's path) gets its place in the list."""
    names = [r.name if r != top else top_id for r in roots]
    ids = [
        n if names.count(n) == 1 else "-".join(r.relative_to(top).parts) or top_id
        for r, n in zip(roots, names, strict=True)
    ]
    return [r if ids.count(r) == 1 else f"{r}-{i}" for i, r in enumerate(ids, start=1)]


def find_collections(logdir: Path, run_id: str) -> list[Collection]:
    """The collections in ``logdir``, each judged on its own: ``logdir`` itself (as ``run_id``) when it is
    a log file or holds one collection or none; else, folder by folder, the largest folders holding one
    collection each (a folder holding several is split the same way), each named as its folder (when two
    share a name, their path below ``logdir`` joined by '-'). Log files lying beside collections, in a
    folder that is split, are one more part: that folder's own files."""
    logdir = Path(logdir)
    if logdir.is_file():
        return [Collection(logdir, run_id)]
    parts = _split(logdir)
    if len(parts) < 2:
        return [Collection(logdir, run_id)]
    ids = _run_ids(logdir, run_id, [root for root, _ in parts])
    return [Collection(root, rid, loose) for (root, loose), rid in zip(parts, ids, strict=True)]
