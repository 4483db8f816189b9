"""The growth of a cost with its input: the least-squares slope of log(cost) against log(size)."""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_SLOPE = 1.1  # above it, a cost grows faster than its input: a defect (issue 44)
TAIL_POINTS = 3  # the largest sizes, where a command's fixed start-up cost weighs least


@dataclass(frozen=True)
class Fit:
    """A log-log slope and the sizes it was fitted over."""

    slope: float | None
    sizes: tuple[int, ...]

    @property
    def defect(self) -> bool:
        """Judged on the slope as shown (two decimals), so that a table never flags a 1.10."""
        return self.slope is not None and round(self.slope, 2) > MAX_SLOPE


def loglog_slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log(y) on log(x) over (x, y) points; None for fewer than two distinct
    sizes or a non-positive value.

    >>> round(loglog_slope([(10, 1.0), (100, 10.0), (1000, 100.0)]), 6)
    1.0
    >>> round(loglog_slope([(1, 1.0), (4, 8.0), (16, 64.0)]), 3)
    1.5
    """
    if len({x for x, _ in points}) < 2 or any(x <= 0 or y <= 0 for x, y in points):
        return None
    logs = [(math.log(x), math.log(y)) for x, y in points]
    mx = sum(u for u, _ in logs) / len(logs)
    my = sum(v for _, v in logs) / len(logs)
    sxx = sum((u - mx) ** 2 for u, _ in logs)
    return sum((u - mx) * (v - my) for u, v in logs) / sxx


def fits(points: list[tuple[int, float]]) -> tuple[Fit, Fit]:
    """The slope over every size and over the largest TAIL_POINTS sizes (the latter None when there
    are no more sizes than that: it would repeat the first)."""
    ordered = sorted(points)
    tail = ordered[-TAIL_POINTS:] if len(ordered) > TAIL_POINTS else []
    return (
        Fit(loglog_slope(ordered), tuple(x for x, _ in ordered)),
        Fit(loglog_slope(tail), tuple(x for x, _ in tail)),
    )
