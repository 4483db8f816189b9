"""Where a CSV file's microsecond times lie: a decimal of its first data row, the anchor that lets
``sql_values.decimal_us_to_ns`` convert the file's times in 64-bit arithmetic."""

from __future__ import annotations

import csv
import io
from decimal import Decimal, InvalidOperation
from pathlib import Path

_HEAD_BYTES = 1 << 16


def ns_anchor(path: Path, columns: list[str], headers: list[str]) -> Decimal | None:
    """The first finite decimal among the first data row's cells under ``headers`` (``columns`` is
    the file's header, in order); None when there is none. Only speed depends on it: any value, even
    a wrong one from a malformed row, leaves the converted times exact."""
    positions = [columns.index(h) for h in headers if h in columns]
    if not positions:
        return None
    try:
        with path.open("rb") as fh:
            head = fh.read(_HEAD_BYTES).decode("latin-1")  # digits are ASCII in any encoding
        rows = csv.reader(io.StringIO(head))
        next(rows, None)
        row = next(rows, [])
    except (OSError, csv.Error):
        return None
    for i in positions:
        anchor = _decimal(row[i]) if i < len(row) else None
        if anchor is not None:
            return anchor
    return None


def _decimal(cell: str) -> Decimal | None:
    try:
        value = Decimal(cell.strip())
    except InvalidOperation:
        return None
    return value if value.is_finite() else None
