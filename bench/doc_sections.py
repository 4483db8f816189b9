"""A marked section of a Markdown page written by a benchmark: replaced in place, or appended."""

from __future__ import annotations

from pathlib import Path

from analyzer.atomic_files import write_text_atomically

NEW_PAGE = "# Benchmarks\n\nWritten by the benchmark code.\n"


def write_marked_section(doc: Path, text: str, start: str, end: str) -> None:
    """Replace the text of ``doc`` from ``start`` to ``end`` (markers included in ``text``) with
    ``text``; append it when the markers are absent, create the page when it is missing."""
    old = doc.read_text(encoding="utf-8") if doc.is_file() else NEW_PAGE
    if start in old and end in old:
        head, rest = old.split(start, 1)
        new = head + text.rstrip("\n") + rest.split(end, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    write_text_atomically(doc, new if new.endswith("\n") else new + "\n")
