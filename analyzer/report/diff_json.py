"""A run diff as a JSON-serializable dict (the `diff --json` format), floats rounded for stable output."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from analyzer.diff.model import RunDiff

DIFF_FORMAT_VERSION = 1


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else round(value, 6)
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def diff_to_dict(diff: RunDiff, fail_pct: float | None = None) -> dict[str, Any]:
    """Every field of the diff; with ``fail_pct``, also the regressions beyond it."""
    data = dataclasses.asdict(diff)
    data["format_version"] = DIFF_FORMAT_VERSION
    if fail_pct is not None:
        data["regressions"] = {"limit_pct": fail_pct, "found": diff.regressions(fail_pct)}
    return _clean(data)
