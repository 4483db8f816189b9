"""Values read from metadata files, checked for type and range: a wrong one is a problem naming the key.

Metadata is written by hand as often as by a tool (``profiler_metadata.json``), so ``batch_size``
may come as 32, "32", 32.0, "32.0", "abc", 1e999 or an object; only whole numbers in range are kept.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from analyzer.ingest.model import ReadContext

INT_MAX = 2**31 - 1  # the INTEGER columns of the runs table


def whole_number(value: Any, key: str, path: Path, ctx: ReadContext, low: int = 1, high: int = INT_MAX) -> int | None:
    """``value`` as an int when it is a whole number from ``low`` to ``high`` (also written as text or
    as a float such as 32.0); else None and an error problem on ``path`` naming ``key``."""
    number = value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    fits = (
        isinstance(number, int | float)
        and not isinstance(number, bool)
        and math.isfinite(number)
        and number == int(number)
        and low <= number <= high
    )
    if fits:
        return int(number)
    shown = json_text(value)
    ctx.report(
        path,
        f"key {key}",
        "error",
        f"{key} is {shown}, not a whole number from {low} to {high}",
        "the value is left unknown; the rest of the file is used",
    )
    return None


def text(value: Any, key: str, path: Path, ctx: ReadContext) -> str | None:
    """``value`` when it is a string (numbers are written as text); else None and an error problem."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return str(value)
    ctx.report(
        path,
        f"key {key}",
        "error",
        f"{key} is {json_text(value)}, not a text",
        "the value is left unknown; the rest of the file is used",
    )
    return None


def json_text(value: Any) -> str:
    """A short printable form of a metadata value.

    >>> json_text({"a": 1}), json_text("abc"), json_text(float("inf"))
    ('{"a": 1}', '"abc"', 'Infinity')
    """
    import json

    shown = json.dumps(value, ensure_ascii=False, default=str)
    return shown if len(shown) <= 60 else shown[:57] + "..."
