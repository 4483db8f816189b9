"""A chunk's sums: the float32 kernel (fast_chunk.py) where it can bound its rounding, else float64."""

from __future__ import annotations

import math
import threading

import numpy as np

from analyzer.accuracy.fast_chunk import EXACT_IN_FLOAT32, LANES, fast_partial, keeps_subnormals
from analyzer.accuracy.partial import FP16_MAX, REL_EPS, Partial, metrics

__all__ = ["REL_EPS", "Partial", "chunk_partial", "metrics"]


class Workspace:
    """Buffers a thread reuses chunk after chunk: a fresh array per step would cost the page faults of a new
    memory mapping each time (numpy's allocator hands arrays this size to mmap), more than the step."""

    def __init__(self, size: int) -> None:
        self.x, self.y, self.d = np.empty(size), np.empty(size), np.empty(size)
        self.x32, self.y32 = np.empty(size, np.float32), np.empty(size, np.float32)
        self.d32, self.parts = np.empty(size, np.float32), np.empty((5, size // LANES), np.float32)
        self.mask = np.empty(size, dtype=bool)
        self.subnormals = keeps_subnormals()


_local = threading.local()


def workspace(size: int) -> Workspace:
    """This thread's workspace, (re)made when a larger chunk comes."""
    ws = getattr(_local, "ws", None)
    if ws is None or ws.x.size < size:
        ws = _local.ws = Workspace(size)
    return ws


def chunk_partial(x: np.ndarray, y: np.ndarray, exact: bool = False) -> Partial:
    """The sums of one chunk: ``x`` the dump's elements, ``y`` the reference's, same length; ``exact`` keeps
    to float64 arithmetic."""
    x, y = x.ravel(), y.ravel()
    ws, n = workspace(x.size), x.size
    whole = n - n % LANES  # the float32 kernel takes LANES elements a column; the rest (< LANES) go to float64
    exact_in_float32 = x.dtype.name in EXACT_IN_FLOAT32 and y.dtype.name in EXACT_IN_FLOAT32
    fast = not exact and whole and ws.subnormals and exact_in_float32
    p = fast_partial(x[:whole], y[:whole], ws) if fast else None
    if p is None:
        return exact_partial(x, y, ws)
    return p.add(exact_partial(x[whole:], y[whole:], ws)) if whole < n else p


def exact_partial(x: np.ndarray, y: np.ndarray, ws: Workspace) -> Partial:
    """The sums of a chunk in float64, NaN and Inf counted and left out."""
    n = x.size
    xf, yf = ws.x[:n], ws.y[:n]
    np.copyto(xf, x, casting="unsafe")
    np.copyto(yf, y, casting="unsafe")
    p = Partial()
    sxx, syy = _dot(xf, xf), _dot(yf, yf)
    if not (math.isfinite(sxx) and math.isfinite(syy)):
        xf, yf = _drop_nonfinite(xf, yf, p)
        sxx, syy = _dot(xf, xf), _dot(yf, yf)
    p.finite_count, p.sxx, p.syy, p.sxy = xf.size, sxx, syy, _dot(xf, yf)
    if not xf.size:
        return p
    d = np.subtract(xf, yf, out=ws.d[: xf.size])
    p.sdd = _dot(d, d)
    np.abs(d, out=d)
    p.max_abs, p.sum_abs = float(d.max()), float(d.sum())
    _relative(p, d, np.abs(yf, out=yf), ws.mask[: xf.size])
    _ranges(p, xf, yf)
    return p


def _relative(p: Partial, ad: np.ndarray, ay: np.ndarray, valid: np.ndarray) -> None:
    """Relative error over |y| > REL_EPS, and the largest |y|; ``ad`` = |x - y| and ``valid`` are overwritten."""
    p.ref_max_abs = float(ay.max())
    np.greater(ay, REL_EPS, out=valid)
    p.rel_count = int(np.count_nonzero(valid))
    if p.rel_count < ad.size:  # |x - y| / inf = 0 leaves the others out of the sum and the max
        ay = np.where(valid, ay, np.inf)
    if p.rel_count:
        np.divide(ad, ay, out=ad)
        p.max_rel, p.sum_rel = float(ad.max()), float(ad.sum())


def _ranges(p: Partial, xf: np.ndarray, ay: np.ndarray) -> None:
    """Largest |x| and |y|, and the elements beyond float16's range (counted only when there are some)."""
    p.dump_max_abs = max(float(xf.max()), -float(xf.min()))
    if p.dump_max_abs >= FP16_MAX:
        p.dump_saturated += int(np.count_nonzero(np.abs(xf) >= FP16_MAX))
    if p.ref_max_abs > FP16_MAX:
        p.ref_over_fp16 = int(np.count_nonzero(ay > FP16_MAX))


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Sum of products without BLAS: BLAS would start threads of its own under each of the pool's."""
    return float(np.einsum("i,i->", a, b))


def _drop_nonfinite(xf: np.ndarray, yf: np.ndarray, p: Partial) -> tuple[np.ndarray, np.ndarray]:
    """Count NaN and Inf on each side into ``p`` and keep the elements finite on both."""
    fx, fy = np.isfinite(xf), np.isfinite(yf)
    p.dump_nan, p.ref_nan = int(np.isnan(xf).sum()), int(np.isnan(yf).sum())
    p.dump_inf, p.ref_inf = int(xf.size - fx.sum()) - p.dump_nan, int(yf.size - fy.sum()) - p.ref_nan
    p.dump_saturated = p.dump_inf
    same = (np.isnan(xf) & np.isnan(yf)) | ((xf == yf) & ~fx)  # NaN on both sides, or the same Inf
    p.nonfinite_mismatch = int(np.count_nonzero(~(fx & fy) & ~same))
    both = fx & fy
    return xf[both], yf[both]
