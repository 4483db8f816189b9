"""A generated job's files, found and damaged by the job tests: a rank's export folder, a value replaced."""

from __future__ import annotations

import re
from pathlib import Path


def rank_dir(root: Path, rank: int) -> Path:
    """The export folder of ``rank`` in a job written by fixtures.generator.job_layout."""
    return next(root.glob(f"rank{rank}_*_ascend_pt"))


def spoil(path: Path, field: str, value: str, count: int = 0) -> None:
    """Replace the value of ``field`` (a JSON key or a CSV column) by ``value``: its first ``count``
    occurrences in a JSON file (0: all), the first data line of a CSV file."""
    text = path.read_text()
    if path.suffix == ".json":
        text, n = re.subn(rf'("{re.escape(field)}": )[^,}}\n]+', rf"\g<1>{value}", text, count=count)
    else:
        lines = text.splitlines()
        col = lines[0].split(",").index(field)
        cells = lines[1].split(",")
        cells[col] = value
        lines[1], n = ",".join(cells), 1
        text = "\n".join(lines) + "\n"
    assert n, (path, field)
    path.write_text(text)
