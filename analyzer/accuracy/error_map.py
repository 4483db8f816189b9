"""Where the error of a tensor pair sits: an H x W map and a per-channel profile, streamed plane block by block."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analyzer.accuracy.pairing import Pair

PLANE_BLOCK_ELEMENTS = 1 << 22


@dataclass
class ErrorMap:
    """Sums of |x - y| over the tensor's positions and channels, and its largest elements."""

    heat: np.ndarray  # (H, W) sum of finite |x - y| over batch and channels
    bad: np.ndarray  # (H, W) count of elements non-finite on one side only
    channel: np.ndarray  # (C,) sum of finite |x - y| over batch and positions
    channel_bad: np.ndarray  # (C,) count of one-sided non-finite elements
    top: np.ndarray  # the largest finite |x - y| values (at most top_k)
    planes: int  # N: how many H x W planes each channel adds up
    element_count: int


def layout(shape: tuple[int, ...], fmt: str) -> tuple[int, int, int, int, bool]:
    """(N, C, H, W, channels_last) of a logical shape: leading axes fold into N; 2-d is one H x W plane.

    >>> layout((2, 3, 4, 5), "NCHW"), layout((2, 4, 5, 3), "NHWC"), layout((7,), "ND")
    ((2, 3, 4, 5, False), (2, 3, 4, 5, True), (1, 1, 1, 7, False))
    """
    dims = [int(d) for d in shape] or [1]
    if fmt == "NHWC" and len(dims) == 4:
        return dims[0], dims[3], dims[1], dims[2], True
    while len(dims) < 4:
        dims.insert(0, 1)
    n = int(np.prod(dims[:-3], dtype=np.int64))
    return n, dims[-3], dims[-2], dims[-1], False


def error_map(pair: Pair, top_k: int) -> ErrorMap:
    """The error's distribution over a pair (read in blocks of whole N-slices, so memory stays bounded)."""
    n, c, h, w, last = layout(pair.dump.logical_shape, pair.dump.fmt)
    m = ErrorMap(np.zeros((h, w)), np.zeros((h, w)), np.zeros(c), np.zeros(c), np.empty(0), n, n * c * h * w)
    per_n = c * h * w
    step = max(1, PLANE_BLOCK_ELEMENTS // max(per_n, 1))
    for first in range(0, n, step):
        count = min(step, n - first)
        x = pair.dump.read(first * per_n, (first + count) * per_n).astype(np.float64)
        y = pair.reference.read(first * per_n, (first + count) * per_n).astype(np.float64)
        shape = (count, h, w, c) if last else (count, c, h, w)
        _add_block(m, x.reshape(shape), y.reshape(shape), last, top_k)
    return m


def _add_block(m: ErrorMap, x: np.ndarray, y: np.ndarray, last: bool, top_k: int) -> None:
    if last:
        x, y = x.transpose(0, 3, 1, 2), y.transpose(0, 3, 1, 2)
    finite = np.isfinite(x) & np.isfinite(y)
    same = (np.isnan(x) & np.isnan(y)) | ((x == y) & ~finite)
    bad = ~finite & ~same
    err = np.where(finite, np.abs(x - y), 0.0)
    m.heat += err.sum(axis=(0, 1))
    m.bad += bad.sum(axis=(0, 1))
    m.channel += err.sum(axis=(0, 2, 3))
    m.channel_bad += bad.sum(axis=(0, 2, 3))
    flat = err.ravel()
    k = min(top_k, flat.size)
    block_top = np.partition(flat, flat.size - k)[flat.size - k :] if k else flat[:0]
    merged = np.concatenate([m.top, block_top])
    m.top = np.sort(merged)[-top_k:] if merged.size > top_k else merged
