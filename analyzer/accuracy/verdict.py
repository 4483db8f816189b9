"""The shape of an error map: at map borders or tile edges, in some channels, in a few elements, or spread out."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analyzer.accuracy.error_map import ErrorMap

FEW_ELEMENTS_SHARE = 0.001  # 'a few elements': at most this share of the tensor (and at least 8 elements)
CONCENTRATED_SHARE = 0.6  # a region holding at least this share of the error ...
CONCENTRATION = 2.0  # ... at least this many times its share of the area (a few elements) is where it sits
HOT_CHANNEL_FACTOR = 10.0  # a channel whose mean error is this many times the median channel's
EDGE_CONTRAST = 4.0  # tile edges / borders: their mean error at least this many times the rest's ...
MAX_EDGE_AREA = 0.8  # ... on at most this share of the map


@dataclass(frozen=True)
class Verdict:
    """The verdict on an error map and the numbers it rests on."""

    verdict: str  # 'edges' | 'channels' | 'elements' | 'spread' | 'none'
    detail: str
    share: float  # share of the error in the region named (0-1)
    area_share: float  # share of the tensor that region covers (0-1)
    tile_period: int | None = None
    hot_channels: tuple[int, ...] = ()


def few_count(element_count: int) -> int:
    """How many elements 'a few' means for a tensor of this size.

    >>> few_count(100), few_count(1_000_000)
    (8, 1000)
    """
    return max(8, int(element_count * FEW_ELEMENTS_SHARE))


def judge(m: ErrorMap) -> Verdict:
    """The first of: a few elements, some channels, map borders / tile edges, else spread."""
    bad_total = float(m.bad.sum())
    if bad_total:  # one-sided NaN/Inf: their places are the error
        if bad_total <= few_count(m.element_count):
            return Verdict("elements", f"{int(bad_total)} element(s) NaN/Inf on one side only", 1.0, 0.0)
        heat, channel = m.bad, m.channel_bad
    else:
        heat, channel = m.heat, m.channel
    total = float(heat.sum())
    if total <= 0:
        return Verdict("none", "no difference", 0.0, 0.0)
    if not bad_total and (v := _few_elements(m, total)):
        return v
    edges = _edges(heat, total, tiles=m.exact)
    return _channels(channel, total) or edges or Verdict("spread", "spread over the tensor", 1.0, 1.0)


def _few_elements(m: ErrorMap, total: float) -> Verdict | None:
    k = few_count(m.element_count)
    share = float(np.sort(m.top)[-k:].sum()) / total
    if share >= CONCENTRATED_SHARE and k < m.element_count / CONCENTRATION:
        return Verdict("elements", f"{k} largest element(s) hold {share:.0%} of the error", share, k / m.element_count)
    return None


def _channels(channel: np.ndarray, total: float) -> Verdict | None:
    if channel.size < 2:
        return None
    floor = float(np.median(channel))
    hot = np.flatnonzero(channel > HOT_CHANNEL_FACTOR * floor + 1e-300)
    share = float(channel[hot].sum()) / total if hot.size else 0.0
    if 0 < hot.size <= channel.size // 2 and share >= CONCENTRATED_SHARE:
        names = ", ".join(str(i) for i in hot[:16]) + (" ..." if hot.size > 16 else "")
        detail = f"{hot.size} of {channel.size} channel(s) ({names}) hold {share:.0%} of the error"
        return Verdict("channels", detail, share, hot.size / channel.size, hot_channels=tuple(int(i) for i in hot))
    return None


def _edges(heat: np.ndarray, total: float, tiles: bool = True) -> Verdict | None:
    """Map borders, else the edges of t x t tiles (largest t first, so that a tile's multiple does not win);
    a binned map (``tiles`` False) is judged on its borders only."""
    h, w = heat.shape
    if max(h, w) < 4:
        return None
    rows, cols = heat.sum(axis=1), heat.sum(axis=0)
    candidates: list[tuple[str, int | None, np.ndarray, np.ndarray]] = [
        ("map borders", None, _lines(h, h), _lines(w, w))
    ]
    periods = range(max(h, w) // 2, 3, -1) if tiles else ()
    candidates += [(f"tile edges every {t}", t, _lines(t, h), _lines(t, w)) for t in periods]
    for detail, period, r, c in candidates:
        on = float(rows[r].sum() + cols[c].sum() - heat[np.ix_(r, c)].sum())
        area = (r.sum() * w + c.sum() * h - r.sum() * c.sum()) / (h * w)
        share = on / total
        if area <= MAX_EDGE_AREA and share >= CONCENTRATED_SHARE and _contrast(share, area) >= EDGE_CONTRAST:
            return Verdict("edges", f"{detail}: {share:.0%} of the error on {area:.0%} of the map", share, area, period)
    return None


def _contrast(share: float, area: float) -> float:
    """Mean error on the region over the mean error off it (inf when nothing is off it).

    >>> round(_contrast(0.9, 0.5), 6), _contrast(0.5, 0.5)
    (9.0, 1.0)
    """
    return float("inf") if share >= 1.0 else (share / area) / ((1.0 - share) / (1.0 - area))


def _lines(period: int, size: int) -> np.ndarray:
    """The first and last index of every tile of ``period`` along one axis (a tile cut short ends at size - 1).

    >>> np.flatnonzero(_lines(4, 10)).tolist()
    [0, 3, 4, 7, 8, 9]
    """
    index = np.arange(size)
    if size < 2:
        return np.zeros(size, dtype=bool)
    return (index % period == 0) | (index % period == period - 1) | (index == size - 1)
