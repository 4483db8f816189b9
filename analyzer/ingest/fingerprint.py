"""Content fingerprint of one export: cheap (sizes, head and tail bytes), computed before or after ingest."""

from __future__ import annotations

import hashlib

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
                st = p.stat()
                h.update(f"{source.rel(p)}:{st.st_size}".encode())
                with p.open("rb") as fh:
                    h.update(fh.read(_CHUNK_BYTES))
                    if st.st_size > 2 * _CHUNK_BYTES:
                        fh.seek(-_CHUNK_BYTES, 2)
                        h.update(fh.read())
            except OSError:
                h.update(b"unreadable")
    return h.hexdigest()[:16]
