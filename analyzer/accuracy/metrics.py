"""Accuracy metrics of one tensor pair, accumulated chunk by chunk in float64 and combined."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, fields

import numpy as np

FP16_MAX = 65504.0
REL_EPS = 1e-6  # relative error is taken over the elements whose reference |y| exceeds this


@dataclass
class Partial:
    """Sums and extremes of a chunk (or of several, combined); metrics are computed at the end."""

    finite_count: int = 0  # elements finite on both sides: the ones the error metrics cover
    sxx: float = 0.0
    syy: float = 0.0
    sxy: float = 0.0
    sdd: float = 0.0
    sum_abs: float = 0.0
    max_abs: float = 0.0
    rel_count: int = 0
    sum_rel: float = 0.0
    max_rel: float = 0.0
    dump_nan: int = 0
    dump_inf: int = 0
    ref_nan: int = 0
    ref_inf: int = 0
    nonfinite_mismatch: int = 0  # elements non-finite on one side and not the same on the other
    dump_saturated: int = 0  # |x| >= FP16_MAX (Inf included)
    ref_over_fp16: int = 0  # finite |y| > FP16_MAX
    dump_max_abs: float = 0.0  # largest finite |x|
    ref_max_abs: float = 0.0

    def add(self, other: Partial) -> Partial:
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            setattr(self, f.name, max(a, b) if f.name.startswith("max") or f.name.endswith("max_abs") else a + b)
        return self


class Workspace:
    """Float64 buffers a thread reuses chunk after chunk: a fresh array per step would cost the page faults of
    a new memory mapping each time (numpy's allocator hands arrays this size to mmap), more than the step."""

    def __init__(self, size: int) -> None:
        self.x, self.y, self.d = np.empty(size), np.empty(size), np.empty(size)
        self.mask = np.empty(size, dtype=bool)


_local = threading.local()


def workspace(size: int) -> Workspace:
    """This thread's workspace, (re)made when a larger chunk comes."""
    ws = getattr(_local, "ws", None)
    if ws is None or ws.x.size < size:
        ws = _local.ws = Workspace(size)
    return ws


def chunk_partial(x: np.ndarray, y: np.ndarray) -> Partial:
    """The sums of one chunk: ``x`` the dump's elements, ``y`` the reference's, same length."""
    ws, n = workspace(x.size), x.size
    xf, yf = ws.x[:n], ws.y[:n]
    np.copyto(xf, x.ravel(), casting="unsafe")
    np.copyto(yf, y.ravel(), casting="unsafe")
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


def metrics(p: Partial) -> dict[str, float | int | None]:
    """The comparison's columns (tensor_compare) from the combined sums."""
    nx, ny = math.sqrt(p.sxx), math.sqrt(p.syy)
    if nx == 0 and ny == 0:
        cosine = 1.0
    elif nx == 0 or ny == 0:
        cosine = 0.0
    else:
        cosine = p.sxy / (nx * ny)
    n = p.finite_count
    return {
        "compared_count": n,
        "cosine": cosine,
        "max_abs_err": p.max_abs if n else None,
        "mean_abs_err": p.sum_abs / n if n else None,
        "max_rel_err": p.max_rel if p.rel_count else None,
        "mean_rel_err": p.sum_rel / p.rel_count if p.rel_count else None,
        "rmse": math.sqrt(p.sdd / n) if n else None,
        "rel_euclidean": math.sqrt(p.sdd / p.syy) if p.syy else (0.0 if p.sdd == 0 else None),
        "dump_nan_count": p.dump_nan,
        "dump_inf_count": p.dump_inf,
        "ref_nan_count": p.ref_nan,
        "ref_inf_count": p.ref_inf,
        "nonfinite_mismatch_count": p.nonfinite_mismatch,
        "dump_saturated_count": p.dump_saturated,
        "ref_over_fp16_count": p.ref_over_fp16,
        "dump_max_abs": p.dump_max_abs,
        "ref_max_abs": p.ref_max_abs,
    }
