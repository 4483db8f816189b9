"""A ReadContext for calling one reader on files in a folder, and a byte-exact file writer."""

from __future__ import annotations

from pathlib import Path

from analyzer.ingest.model import ExportSource, ReadContext


def context_for(folder: Path, run_id: str = "run") -> ReadContext:
    """A context whose export root is ``folder`` (problems name files relative to it)."""
    source = ExportSource(run_id, folder, "", "test", "text", "bare_csv", {})
    return ReadContext(run_id=run_id, source=source)


def write_bytes(folder: Path, name: str, text: str) -> Path:
    """Write ``text`` exactly (TABs, CRLF, no newline translation) and return the path."""
    path = folder / name
    path.write_bytes(text.encode("utf-8"))
    return path
