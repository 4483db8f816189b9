"""The sums and extremes of a tensor pair (a chunk's, or several combined) and the metrics made from them."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

FP16_MAX = 65504.0
REL_EPS = 1e-6  # relative error is taken over the elements whose reference |y| exceeds this


@dataclass(slots=True)
class Partial:
    """Sums and extremes of a chunk (or of several, combined); metrics are computed at the end."""

    finite_count: int = 0  # elements finite on both sides: the ones the error metrics cover
    # second moments of the dump x, the reference y, their product and their difference
    sxx: float = 0.0
    syy: float = 0.0
    sxy: float = 0.0
    sdd: float = 0.0
    # absolute error |x - y|
    sum_abs: float = 0.0
    max_abs: float = 0.0
    # relative error |x - y| / |y|, over the elements whose |y| exceeds REL_EPS
    rel_count: int = 0
    sum_rel: float = 0.0
    max_rel: float = 0.0
    # non-finite elements of each side
    dump_nan: int = 0
    dump_inf: int = 0
    ref_nan: int = 0
    ref_inf: int = 0
    nonfinite_mismatch: int = 0  # elements non-finite on one side and not the same on the other
    # fp16 range
    dump_saturated: int = 0  # |x| >= FP16_MAX (Inf included)
    ref_over_fp16: int = 0  # finite |y| > FP16_MAX
    dump_max_abs: float = 0.0  # largest finite |x|
    ref_max_abs: float = 0.0
    fast_count: int = 0  # elements summed by the float32 kernel (fast_chunk.py), which leaves sxy out

    def add(self, other: Partial) -> Partial:
        for name in _SUMMED:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in _LARGEST:
            setattr(self, name, max(getattr(self, name), getattr(other, name)))
        return self


_LARGEST = tuple(f.name for f in fields(Partial) if f.name.startswith("max") or f.name.endswith("max_abs"))
_SUMMED = tuple(f.name for f in fields(Partial) if f.name not in _LARGEST)


def metrics(p: Partial) -> dict[str, float | int | None]:
    """The comparison's columns (tensor_compare) from the combined sums."""
    cosine = cosine_of(p)
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


def cosine_of(p: Partial) -> float:
    """sum xy / (|x| |y|): 1 when both norms are 0, 0 when one is. When the float32 kernel took part (it does
    not sum xy), from sum (x - y)^2: with r = |x| / |y|, cos = (r + 1/r) / 2 - sum (x - y)^2 / (2 |x| |y|), in
    which the rounding of the two norms cancels to first order where x and y agree (fast_chunk.py)."""
    nx, ny = math.sqrt(p.sxx), math.sqrt(p.syy)
    if nx == 0 or ny == 0:
        return 1.0 if nx == ny else 0.0
    if not p.fast_count:
        return p.sxy / (nx * ny)
    r = nx / ny
    return max(-1.0, min(1.0, (r + 1 / r) / 2 - p.sdd / (2 * nx * ny)))
