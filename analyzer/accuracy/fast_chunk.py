"""The float32 kernel of a chunk's sums, for inputs float32 holds exactly; it declines what it cannot bound.

Why its results stay within 1e-6 (relative) of a float64 computation: the inputs are exact in float32 (float16,
bfloat16, float8, float32); each elementwise step rounds once (u = 2**-24); each sum is taken LANES terms at a
time in float32 (any order of 8 terms rounds by at most 8u of the sum of their magnitudes) and those partial sums
are added in float64. So every sum here, all of non-negative terms, is within 10u (6e-7) of its value. x.y is not
summed: the cosine comes from the norms and sum (x - y)^2 (partial.cosine_of), where the norms' rounding cancels
to first order; cosine_bound() bounds what is left, and compare.py sums a pair again in float64 when that bound
passes COSINE_BOUND (a cosine far from 1). A chunk holding NaN or Inf, overflowing float32, or small enough that
float32 underflow could cost digits (a sum under n * TINY) is declined (None) and goes to the float64 kernel.
"""

from __future__ import annotations

import math

import numpy as np

from analyzer.accuracy.partial import FP16_MAX, REL_EPS, Partial, cosine_of

LANES = 8
U = 2.0**-24
SUM_ROUNDING = 8.1 * U  # of a LANES-term float32 sum added in float64 (8u, and a little for the float64 part)
COSINE_BOUND = 5e-7  # relative; half the 1e-6 promised, for the second-order terms and the float64 reference's
TINY = 1e-36  # a float32 sum above n * TINY has lost at most ~1e-9 of itself to gradual underflow
HALF_BEYOND = 65536.0  # no finite float16 reaches it; Inf/NaN halves land at or beyond it after the bit conversion
EXACT_IN_FLOAT32 = frozenset({"float16", "float32", "bfloat16", "float8_e5m2", "float8_e4m3fn"})  # dtype names
_SIGN_EXP_MANT = np.uint32(0x8FFFFFFF)  # a half's sign, exponent and mantissa once shifted into float32's places
_REBIAS = np.float32(2.0**112)  # float16's exponent bias (15) to float32's (127)
_EPS32 = np.float32(REL_EPS)  # |y| > float32(1e-6) is the same test as |y| > 1e-6 for every float32 |y|


def keeps_subnormals() -> bool:
    """False when this thread flushes float32 subnormals to zero (FTZ/DAZ, set by some libraries' builds): the
    half conversion and the underflow bound both need them."""
    tiny = np.array([2.0**-140], dtype=np.float32)
    return float(np.multiply(tiny, _REBIAS)[0]) == 2.0**-28


def fast_partial(x: np.ndarray, y: np.ndarray, ws) -> Partial | None:
    """The sums of a chunk of LANES * k elements in float32 arithmetic, or None when it must go to float64."""
    n = x.size
    xf = _to_float32(x, ws.x32[:n])
    lo, hi = float(xf.min()), float(xf.max())
    if not (-HALF_BEYOND < lo and hi < HALF_BEYOND) and (x.dtype == np.float16 or not math.isfinite(lo + hi)):
        return None
    yf = _to_float32(y, ws.y32[:n])
    p = Partial(finite_count=n, fast_count=n, dump_max_abs=max(hi, -lo))
    if p.dump_max_abs >= FP16_MAX:
        p.dump_saturated = int(np.count_nonzero(np.abs(xf) >= FP16_MAX))
    parts = ws.parts[:, : n // LANES]  # one row of LANES-term partial sums per sum, added in float64 at the end
    d = np.subtract(xf, yf, out=ws.d32[:n])
    for row, a in enumerate((xf, yf, d)):
        np.einsum("ij,ij->j", a.reshape(LANES, -1), a.reshape(LANES, -1), out=parts[row])
    ad = np.abs(d, out=d)
    p.max_abs = float(ad.max())
    np.add.reduce(ad.reshape(LANES, -1), axis=0, out=parts[3])
    _relative(p, ad, np.abs(yf, out=ws.x32[:n]), ws.mask[:n], parts[4])  # x is done with: its buffer takes |y|
    p.sxx, p.syy, p.sdd, p.sum_abs, p.sum_rel = np.add.reduce(parts, axis=1, dtype=np.float64).tolist()
    return p if _bounded(p, n) else None


def _to_float32(a: np.ndarray, buf: np.ndarray) -> np.ndarray:
    """``a`` as float32: itself when it is, a half through integer steps (numpy's own half cast converts one
    element at a time, slower than the rest of the chunk's work), any other exact kind through numpy's cast."""
    if a.dtype == np.float32:
        return a
    if a.dtype != np.float16:
        np.copyto(buf, a, casting="unsafe")
        return buf
    bits = buf.view(np.uint32)
    np.copyto(buf.view(np.int32), a.view(np.int16))  # sign-extended: the sign reaches bit 31 after the shift
    np.left_shift(bits, np.uint32(13), out=bits)
    np.bitwise_and(bits, _SIGN_EXP_MANT, out=bits)
    return np.multiply(buf, _REBIAS, out=buf)  # subnormal halves (float32 subnormals here) come out normal


def _relative(p: Partial, ad: np.ndarray, ay: np.ndarray, invalid: np.ndarray, part: np.ndarray) -> None:
    """Relative error over |y| > REL_EPS (``ad`` and ``ay`` overwritten; its partial sums into ``part``), the
    largest |y|, the count of |y| past float16's range."""
    p.ref_max_abs = float(ay.max())
    if p.ref_max_abs > FP16_MAX:
        p.ref_over_fp16 = int(np.count_nonzero(ay > FP16_MAX))
    np.less_equal(ay, _EPS32, out=invalid)
    left_out = int(np.count_nonzero(invalid))
    p.rel_count = ad.size - left_out
    if left_out:  # |x - y| / inf = 0 leaves them out of the sum and the max
        np.copyto(ay, np.float32(np.inf), where=invalid)
    r = np.divide(ad, ay, out=ad)
    p.max_rel = float(r.max()) if p.rel_count else 0.0
    np.add.reduce(r.reshape(LANES, -1), axis=0, out=part)


def _bounded(p: Partial, n: int) -> bool:
    """True when the sums are finite and far enough above float32's underflow for the bound (a sum of exact
    zeros, as when x == y, is exact)."""
    sums = (p.sxx, p.syy, p.sdd, p.sum_abs, p.sum_rel)
    if not all(math.isfinite(s) for s in sums):
        return False
    floor = n * TINY
    return (
        (p.sxx >= floor or p.dump_max_abs == 0)
        and (p.syy >= floor or p.ref_max_abs == 0)
        and ((p.sdd >= floor and p.sum_abs >= floor) or p.max_abs == 0)
        and (p.sum_rel >= floor or p.max_abs == 0 or p.rel_count == 0)
    )


def cosine_bound(p: Partial) -> float:
    """A bound (first order in u) of the relative error the float32 sums leave in partial.cosine_of(p): the norms'
    rounding (at most SUM_ROUNDING each) moves (r + 1/r) / 2 by 2 * SUM_ROUNDING * |r - 1/r| / 4, and the last
    term carries sum (x - y)^2's rounding (2u from x - y, and SUM_ROUNDING) and the norms'."""
    nx, ny = math.sqrt(p.sxx), math.sqrt(p.syy)
    if nx == 0 or ny == 0:  # exact zeros (_bounded): the cosine is exactly 1 or 0
        return 0.0
    cosine = cosine_of(p)
    r = nx / ny
    error = SUM_ROUNDING / 2 * abs(r - 1 / r) + (2 * U + 2 * SUM_ROUNDING) * p.sdd / (2 * nx * ny)
    return error / abs(cosine) if cosine else math.inf
