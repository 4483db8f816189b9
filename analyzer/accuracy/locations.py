"""The error_locations row of a located tensor: its verdict and a heatmap small enough for a report."""

from __future__ import annotations

import numpy as np

from analyzer.accuracy.error_map import ErrorMap
from analyzer.accuracy.pairing import Pair
from analyzer.accuracy.verdict import Verdict

MAP_SIDE = 64  # a map larger than this is block-averaged down to it
MAX_CHANNELS = 4096


def shrink(values: np.ndarray, side: int = MAP_SIDE) -> np.ndarray:
    """Block means of a 2-d map so that neither side exceeds ``side``.

    >>> shrink(np.arange(16.0).reshape(4, 4), 2).tolist()
    [[2.5, 4.5], [10.5, 12.5]]
    """
    h, w = values.shape
    fh, fw = -(-h // side), -(-w // side)
    if fh == 1 and fw == 1:
        return values
    padded = np.full((-(-h // fh) * fh, -(-w // fw) * fw), np.nan)
    padded[:h, :w] = values
    return np.nanmean(padded.reshape(padded.shape[0] // fh, fh, padded.shape[1] // fw, fw), axis=(1, 3))


def location_row(run_id: str, pair: Pair, emap: ErrorMap, verdict: Verdict) -> dict:
    """One row of error_locations."""
    # per-bin means: a bin's sum over the elements that fall in it
    per_cell = max(emap.element_count / emap.heat.size, 1.0)
    heat = emap.bad if emap.bad.any() else emap.heat / per_cell
    small = shrink(heat)
    per_channel = max(emap.element_count / emap.channel.size, 1.0)
    t = pair.dump
    return {
        "run_id": run_id, "op_name": t.op_name, "occurrence": pair.occurrence, "slot": t.slot,
        "slot_index": t.slot_index, "verdict": verdict.verdict, "detail": verdict.detail,
        "region_share": verdict.share, "region_area_share": verdict.area_share, "tile_period": verdict.tile_period,
        "hot_channels": list(verdict.hot_channels), "map_rows": small.shape[0], "map_cols": small.shape[1],
        "heatmap": [float(v) for v in small.ravel()],
        "channel_error": [float(v) for v in (emap.channel[:MAX_CHANNELS] / per_channel)],
    }  # fmt: skip
