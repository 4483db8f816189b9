"""Where a CSV file's microsecond times lie: a decimal of its first data row, the anchor that lets
``sql_values.decimal_us_to_ns`` convert the file's times in 64-bit arithmetic."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation


def ns_anchor(first_row: list[str], columns: list[str], headers: list[str]) -> Decimal | None:
    """The first finite decimal among the cells of ``first_row`` (the file's first data row, as
    ``csv_source.stream_csv`` hands it over) under ``headers``; ``columns`` is the file's header, in
    order. None when there is none. Only speed depends on it: any value, even a wrong one from a
    malformed row, leaves the converted times exact."""
    for i in (columns.index(h) for h in headers if h in columns):
        anchor = _decimal(first_row[i]) if i < len(first_row) else None
        if anchor is not None:
            return anchor
    return None


def _decimal(cell: str) -> Decimal | None:
    try:
        value = Decimal(cell.strip())
    except InvalidOperation:
        return None
    return value if value.is_finite() else None
