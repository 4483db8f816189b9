"""Hash every file (and the listing) of a folder tree, to prove that a command left it byte-identical."""

from __future__ import annotations

import hashlib
from pathlib import Path


def tree_digest(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under root (side files like -wal/-shm show up as new keys)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out
