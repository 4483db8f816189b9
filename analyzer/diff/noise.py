"""Is a change beyond run-to-run noise? Median shift against a robust (MAD) noise band, and Mann-Whitney U.

The decision: with at least 3 samples per side (steps), a shift is beyond noise when the median
shift exceeds a Bonferroni-corrected Student-t band of robust standard errors (1.4826 x the
pooled MAD of both runs' residuals, floored at 0.5 % of the median so identical steps do not
make every hair-width change significant) and the change is at least MIN_EFFECT (3 %, the
run-to-run noise floor that steps of a single run cannot show). A warm-up step does
not widen the band as a standard deviation would. The 95 % interval of the relative change
(same band, uncorrected) and Mann-Whitney U's p-value are reported beside it (rank tests alone
cannot separate 5 steps from 5 steps once corrected for many op types). The confidence word
follows both: the band sets it, the rank test's p-value caps it (p <= 0.01 for 'high', p <= 0.05
for 'medium', else 'low'), so no line reads 'p=0.095, confidence high'.

The verdict (``Shift.verdict``) follows from these statistics alone, in this order: 'no noise estimate'
(under 3 samples on a side: no band, no interval, no test; never 'beyond noise', however large),
'beyond noise' (the corrected band is exceeded, the change is at least MIN_EFFECT, the 95 % interval
excludes 0 AND the rank test agrees at the same level, p <= alpha), 'unchanged' (the 95 % interval
covers 0), else 'within noise' (the interval excludes 0 but the change is under the run-to-run floor,
or the corrected band or the rank test does not confirm it). See docs/diff.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np

# Steps of one run share its conditions (clocks, placement, data), so within-run spread understates
# run-to-run noise: two runs of one model commonly differ by 1-2 % in some op type with every step
# separated. Changes under this floor are treated as run-to-run noise.
MIN_EFFECT = 0.03
MAD_FLOOR = 0.005  # per-sample spread is taken as at least 0.5 % of the median


@dataclass(frozen=True)
class Shift:
    """How one quantity moved from base to new, and how sure we are that it moved."""

    base_median: float
    new_median: float
    rel_change: float | None  # new/base - 1; None when base is 0
    ci_low: float | None  # 95 % interval of rel_change from the robust band (not multiplicity-corrected)
    ci_high: float | None
    p_value: float | None  # two-sided Mann-Whitney U; None under 3 samples per side
    n_base: int
    n_new: int
    z_score: float | None = None  # median shift / robust standard error
    significant: bool = False
    confidence: str = "none"  # 'high' | 'medium' | 'low' | 'none'
    verdict: str = ""  # set by judge: 'beyond noise' | 'within noise' | 'unchanged' | 'no noise estimate'


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
    tie = (counts**3 - counts).sum() / (n * (n - 1)) if n > 1 else 0.0
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie))
    if sigma == 0:
        return 1.0
    z = (abs(u - n1 * n2 / 2) - 0.5) / sigma
    return float(min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2))))


def _robust_se(base: np.ndarray, new: np.ndarray) -> float:
    """Standard error of the median shift from the pooled MAD of both runs' residuals."""
    residuals = np.concatenate([base - np.median(base), new - np.median(new)])
    scale = max(abs(float(np.median(base))), abs(float(np.median(new))))
    spread = max(1.4826 * float(np.median(np.abs(residuals))), MAD_FLOOR * scale)
    return spread * math.sqrt(1 / len(base) + 1 / len(new))


def t_quantile(p: float, df: int) -> float:
    """Student-t quantile by the Cornish-Fisher expansion around the normal one (good to ~1 % for df >= 4).

    >>> round(t_quantile(0.975, 8), 2), round(t_quantile(0.975, 1000), 2)
    (2.3, 1.96)
    """
    z = NormalDist().inv_cdf(p)
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def compare_samples(base: np.ndarray, new: np.ndarray) -> Shift:
    """Median shift of ``new`` against ``base``; significance is decided later by ``judge``."""
    base, new = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    bm, nm = float(np.median(base)), float(np.median(new))
    rel = nm / bm - 1.0 if bm > 0 else None
    if len(base) < 3 or len(new) < 3:
        return Shift(bm, nm, rel, None, None, None, len(base), len(new))
    se = _robust_se(base, new)
    z = (nm - bm) / se if se > 0 else (0.0 if nm == bm else math.inf)
    half = t_quantile(0.975, len(base) + len(new) - 2) * se
    lo, hi = ((nm - bm - half) / bm, (nm - bm + half) / bm) if bm > 0 else (None, None)
    return Shift(bm, nm, rel, lo, hi, mann_whitney_p(base, new), len(base), len(new), z)


# The confidence a shift may claim is capped by its rank test: a band-separated median shift whose
# Mann-Whitney p-value is weak (too few steps, overlapping values) is never reported as 'high'.
P_FOR_HIGH = 0.01
P_FOR_MEDIUM = 0.05


def _capped_by_rank_test(confidence: str, p_value: float | None) -> str:
    """The band's confidence, lowered to what the rank test's p-value supports.

    >>> _capped_by_rank_test("high", 0.095), _capped_by_rank_test("high", 0.03), _capped_by_rank_test("high", 0.001)
    ('low', 'medium', 'high')
    """
    if confidence == "none" or p_value is None:
        return confidence
    order = ("low", "medium", "high")
    allowed = "high" if p_value <= P_FOR_HIGH else "medium" if p_value <= P_FOR_MEDIUM else "low"
    return order[min(order.index(confidence), order.index(allowed))]


def _interval_covers_zero(s: Shift) -> bool:
    return s.ci_low is None or s.ci_high is None or s.ci_low <= 0 <= s.ci_high


def judge(shifts: list[Shift], alpha: float = 0.05, min_effect: float = MIN_EFFECT) -> list[Shift]:
    """Mark which shifts are beyond noise and give each its verdict (see the module doc); the band is
    corrected for their number. Shifts without a noise estimate (under 3 steps per side) are never
    beyond noise: their verdict says so."""
    tested = [s for s in shifts if s.z_score is not None]
    p = 1 - alpha / (2 * max(1, len(tested)))
    out = []
    for s in shifts:
        if s.z_score is None:
            out.append(replace(s, significant=False, confidence="none", verdict="no noise estimate"))
            continue
        z_crit = t_quantile(p, max(1, s.n_base + s.n_new - 2))
        big_enough = s.rel_change is None or abs(s.rel_change) >= min_effect
        z = abs(s.z_score)
        test_agrees = s.p_value is not None and s.p_value <= alpha
        sig = z > z_crit and big_enough and test_agrees and not _interval_covers_zero(s)
        conf = "none" if not sig else "high" if z > 2 * z_crit else "medium" if z > 1.5 * z_crit else "low"
        verdict = "beyond noise" if sig else "unchanged" if _interval_covers_zero(s) else "within noise"
        out.append(replace(s, significant=sig, confidence=_capped_by_rank_test(conf, s.p_value), verdict=verdict))
    return out
