"""Where the error of a tensor pair sits: an H x W map and a per-channel profile, streamed block by block.

The map and the profile are binned (at most MAP_BINS x MAP_BINS positions, CHANNEL_BINS channels), so that a
tensor of any shape is located in bounded memory; below those sizes every bin is one position or channel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analyzer.accuracy.pairing import Pair

BLOCK_ELEMENTS = 1 << 21  # a block costs about ten float64 or int64 arrays of its size
MAP_BINS = 512
CHANNEL_BINS = 1 << 16


@dataclass
class ErrorMap:
    """Sums of |x - y| over the tensor's positions and channels (binned), and its largest elements."""

    heat: np.ndarray  # (rows, cols) sum of finite |x - y| over batch and channels
    bad: np.ndarray  # (rows, cols) count of elements non-finite on one side only
    channel: np.ndarray  # (channel bins,) sum of finite |x - y| over batch and positions
    channel_bad: np.ndarray  # (channel bins,) count of one-sided non-finite elements
    top: np.ndarray  # the largest finite |x - y| values (at most top_k)
    planes: int  # N: how many H x W planes each channel adds up
    element_count: int
    exact: bool = True  # every bin is one position (the map is H x W itself)


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


def _reader(source):
    """read(start, stop) of a tensor: a device format is converted once here, not at every block."""
    if not source.is_converted:
        return source.read
    flat = source.whole().reshape(-1)
    return lambda start, stop: flat[start:stop]


def error_map(pair: Pair, top_k: int) -> ErrorMap:
    """The error's distribution over a pair, read in blocks of BLOCK_ELEMENTS."""
    n, c, h, w, last = layout(pair.dump.logical_shape, pair.dump.fmt)
    rb, cb, chb = min(h, MAP_BINS), min(w, MAP_BINS), min(c, CHANNEL_BINS)
    m = ErrorMap(np.zeros((rb, cb)), np.zeros((rb, cb)), np.zeros(chb), np.zeros(chb), np.empty(0), n,
                 n * c * h * w, exact=(rb, cb) == (h, w))  # fmt: skip
    read_x, read_y = _reader(pair.dump), _reader(pair.reference)
    for start in range(0, m.element_count, BLOCK_ELEMENTS):
        stop = min(start + BLOCK_ELEMENTS, m.element_count)
        x, y = read_x(start, stop).astype(np.float64), read_y(start, stop).astype(np.float64)
        cell, chan = _bins(np.arange(start, stop, dtype=np.int64), (c, h, w), (rb, cb, chb), last)
        _add_block(m, x, y, cell, chan, top_k)
    return m


def _bins(index: np.ndarray, dims: tuple[int, int, int], bins: tuple[int, int, int], last: bool):
    """The map cell (row bin * cols + col bin) and the channel bin of flat element indices."""
    c, h, w = dims
    rb, cb, chb = bins
    if last:  # N H W C
        channel, position = index % c, (index // c) % (h * w)
    else:  # N C H W
        channel, position = (index // (h * w)) % c, index % (h * w)
    cell = (position // w) * rb // h * cb + (position % w) * cb // w
    return cell, channel * chb // c


def _add_block(m: ErrorMap, x: np.ndarray, y: np.ndarray, cell: np.ndarray, chan: np.ndarray, top_k: int) -> None:
    finite = np.isfinite(x) & np.isfinite(y)
    same = (np.isnan(x) & np.isnan(y)) | ((x == y) & ~finite)
    bad = (~finite & ~same).astype(np.float64)
    err = np.where(finite, np.abs(x - y), 0.0)
    cells = m.heat.size
    m.heat += np.bincount(cell, weights=err, minlength=cells).reshape(m.heat.shape)
    m.bad += np.bincount(cell, weights=bad, minlength=cells).reshape(m.bad.shape)
    m.channel += np.bincount(chan, weights=err, minlength=m.channel.size)
    m.channel_bad += np.bincount(chan, weights=bad, minlength=m.channel.size)
    k = min(top_k, err.size)
    block_top = np.partition(err, err.size - k)[err.size - k :] if k else err[:0]
    merged = np.concatenate([m.top, block_top])
    m.top = np.sort(merged)[-top_k:] if merged.size > top_k else merged
