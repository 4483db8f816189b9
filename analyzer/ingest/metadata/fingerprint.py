"""Content fingerprint of one export: cheap (sizes, head and tail bytes), computed before or after ingest."""

from __future__ import annotations

import hashlib
from pathlib import Path

from analyzer.ingest.model import ExportSource

_CHUNK_BYTES = 1 << 20


def source_fingerprint(source: ExportSource) -> str:
    """A 16-hex-digit fingerprint of the export's data files.

    It hashes each file's path relative to the export folder, its size, its first MiB and,
    for files over 2 MiB, its last MiB. So it does not depend on where the export lives (the
    same export in two archives has one fingerprint) and costs a few reads per file, which
    lets a batch skip a known export without ingesting it.
    """
    h = hashlib.sha256()
    for kind in sorted(source.files):
        for p in source.files[kind]:
            try:
                hash_file_sample(h, p, source.rel(p))
            except OSError:
                h.update(b"unreadable")
    return h.hexdigest()[:16]


def hash_file_sample(h, path: Path, name: str) -> None:
    """Feed ``name``, the file's size, its first MiB and (over 2 MiB) its last MiB into ``h``."""
    size = path.stat().st_size
    h.update(f"{name}:{size}".encode())
    with path.open("rb") as fh:
        # read(n) makes room for n bytes first: a small file is read at its size, not into a MiB
        h.update(fh.read(min(size, _CHUNK_BYTES)))
        if size > 2 * _CHUNK_BYTES:
            fh.seek(-_CHUNK_BYTES, 2)
            h.update(fh.read())
