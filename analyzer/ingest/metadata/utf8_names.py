"""Folders whose names are not UTF-8, read through a UTF-8 alias: a symbolic link in a private temporary folder.

DuckDB and the reports take only UTF-8 paths; Python keeps a name's other bytes as lone surrogates. The
alias lives outside the input (nothing is written there) for as long as the process, and maps back to the
original path for every label and id.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

_aliases: dict[Path, Path] = {}  # alias -> the folder it stands for
_home: list[Path] = []  # the private folder holding the aliases, made on first use


def _folder() -> Path:
    if not _home:
        _home.append(Path(tempfile.mkdtemp(prefix="npu-triage-names-")))
        atexit.register(shutil.rmtree, _home[0], True)  # removes the links, never what they point to
    return _home[0]


def utf8_alias(path: Path, name: str) -> Path | None:
    """A UTF-8 path leading to the folder ``path`` (named ``name`` in it), or None when none can be made."""
    alias = _folder() / f"{len(_aliases):05d}_{name}"
    try:
        os.symlink(path, alias, target_is_directory=True)
    except OSError:
        return None
    _aliases[alias] = path
    return alias


def original(path: Path) -> Path:
    """``path`` with an alias it lies under replaced by the folder the alias stands for."""
    for alias, folder in _aliases.items():
        if path == alias or path.is_relative_to(alias):
            return original(folder / path.relative_to(alias))
    return path
