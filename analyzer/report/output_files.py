"""Where report files go: a safe folder per run id under the output folder."""

from __future__ import annotations

import re
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def run_folder(out_dir: Path, run_id: str) -> Path:
    """``out_dir`` / one safe folder per '/'-separated part of the run id ('x/dev0' -> x/dev0).

    >>> run_folder(Path("reports"), "exp 1/dev0").as_posix()
    'reports/exp_1/dev0'
    >>> run_folder(Path("reports"), "../../etc").as_posix()
    'reports/_/_/etc'
    """
    parts = [_UNSAFE.sub("_", p) for p in run_id.split("/") if p]
    parts = ["_" if p in (".", "..") or not p.strip(".") else p for p in parts]
    return Path(out_dir).joinpath(*(parts or ["run"]))


def is_inside(path: Path, folder: Path) -> bool:
    """True when ``path`` is ``folder`` or lies below it (both resolved)."""
    path, folder = Path(path).resolve(), Path(folder).resolve()
    return path == folder or folder in path.parents
