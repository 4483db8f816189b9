"""A run diff as a JSON-serializable dict (the `diff --json` format), floats rounded for stable output."""

from __future__ import annotations

import dataclasses
from typing import Any

from analyzer.diff.model import RunDiff
from analyzer.report.json_export import fixed

DIFF_FORMAT_VERSION = 1
FLOAT_DIGITS = 6  # floats are rounded to this many decimals


def diff_to_dict(diff: RunDiff, fail_pct: float | None = None) -> dict[str, Any]:
    """Every field of the diff; with ``fail_pct``, also the regressions beyond it."""
    data = dataclasses.asdict(diff)
    data["format_version"] = DIFF_FORMAT_VERSION
    if fail_pct is not None:
        data["regressions"] = {"limit_pct": fail_pct, "found": diff.regressions(fail_pct)}
    return fixed(data, FLOAT_DIGITS)
