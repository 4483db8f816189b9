"""Is a change beyond run-to-run noise? Median shift, bootstrap CI, Mann-Whitney U and Holm correction (numpy only)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_SAMPLES = 2000
SINGLE_SAMPLE_LIMIT = 0.05  # with one value per side there is no noise estimate: flag only beyond 5 %


@dataclass(frozen=True)
class Shift:
    """How one quantity moved from base to new, and how sure we are that it moved."""

    base_median: float
    new_median: float
    rel_change: float | None  # new/base - 1; None when base is 0
    ci_low: float | None  # bootstrap 95 % interval of rel_change
    ci_high: float | None
    p_value: float | None  # two-sided Mann-Whitney U; None under 3 samples per side
    n_base: int
    n_new: int
    significant: bool = False
    confidence: str = "none"  # 'high' | 'medium' | 'low' | 'none'


def mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of the Mann-Whitney U test, normal approximation with tie correction.

    >>> round(mann_whitney_p(np.array([1., 2, 3, 4, 5]), np.array([6., 7, 8, 9, 10])), 4)
    0.0122
    """
    n1, n2 = len(a), len(b)
    both = np.concatenate([a, b])
    order = both.argsort(kind="mergesort")
    ranks = np.empty(len(both))
    ranks[order] = np.arange(1, len(both) + 1)
    values, inverse, counts = np.unique(both, return_inverse=True, return_counts=True)
    ranks = (np.bincount(inverse, weights=ranks) / counts)[inverse]  # average ranks of ties
    u = ranks[:n1].sum() - n1 * (n1 + 1) / 2
    n = n1 + n2
    tie = (counts ** 3 - counts).sum() / (n * (n - 1)) if n > 1 else 0.0
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie))
    if sigma == 0:
        return 1.0
    z = (abs(u - n1 * n2 / 2) - 0.5) / sigma
    return float(min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2))))


def _bootstrap_ci(base: np.ndarray, new: np.ndarray, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    b = np.median(base[rng.integers(0, len(base), (BOOTSTRAP_SAMPLES, len(base)))], axis=1)
    n = np.median(new[rng.integers(0, len(new), (BOOTSTRAP_SAMPLES, len(new)))], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(b > 0, n / b - 1.0, np.nan)
    rel = rel[~np.isnan(rel)]
    if not len(rel):
        return (math.nan, math.nan)
    return float(np.quantile(rel, 0.025)), float(np.quantile(rel, 0.975))


def compare_samples(base: np.ndarray, new: np.ndarray, seed: int = 0) -> Shift:
    """Median shift of ``new`` against ``base``; significance is decided later by ``judge``."""
    base, new = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    bm, nm = float(np.median(base)), float(np.median(new))
    rel = nm / bm - 1.0 if bm > 0 else None
    if len(base) < 3 or len(new) < 3:
        return Shift(bm, nm, rel, None, None, None, len(base), len(new))
    lo, hi = _bootstrap_ci(base, new, seed)
    return Shift(bm, nm, rel, lo, hi, mann_whitney_p(base, new), len(base), len(new))


def judge(shifts: list[Shift], alpha: float = 0.05) -> list[Shift]:
    """Mark which shifts are beyond noise: Holm-corrected p < alpha and a CI that excludes 0.

    Shifts without a p-value (one step per side) are flagged only beyond 5 % and with 'low' confidence.
    """
    tested = sorted((s.p_value, i) for i, s in enumerate(shifts) if s.p_value is not None)
    holm: dict[int, float] = {}
    running = 0.0
    for k, (p, i) in enumerate(tested):
        running = max(running, min(1.0, p * (len(tested) - k)))
        holm[i] = running
    out = []
    for i, s in enumerate(shifts):
        if s.p_value is None:
            sig = s.rel_change is not None and abs(s.rel_change) > SINGLE_SAMPLE_LIMIT
            out.append(_with(s, sig, "low" if sig else "none"))
            continue
        p = holm[i]
        excludes_zero = s.ci_low is not None and (s.ci_low > 0 or s.ci_high < 0)
        sig = p < alpha and excludes_zero
        conf = "none" if not sig else "high" if p < 0.001 else "medium" if p < 0.01 else "low"
        out.append(_with(s, sig, conf))
    return out


def _with(s: Shift, significant: bool, confidence: str) -> Shift:
    return Shift(s.base_median, s.new_median, s.rel_change, s.ci_low, s.ci_high, s.p_value,
                 s.n_base, s.n_new, significant, confidence)
