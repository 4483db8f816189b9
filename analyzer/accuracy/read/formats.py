"""Device formats of a dump turned back into the original layout (NC1HWC0, FRACTAL_Z, FRACTAL_NZ, ...)."""

from __future__ import annotations

import numpy as np

from analyzer.errors import TriageError

FORMATS: dict[int, str] = {
    0: "NCHW",
    1: "NHWC",
    2: "ND",
    3: "NC1HWC0",
    4: "FRACTAL_Z",
    12: "NC1HWC0_C04",
    13: "FRACTAL_Z_C04",
    14: "CHWN",
    16: "HWCN",
    27: "NDHWC",
    29: "FRACTAL_NZ",
    30: "NCDHW",
    32: "NDC1HWC0",
    33: "FRACTAL_Z_3D",
}
# The layouts read as they are stored (the reference holds the same layout).
PLAIN = {"NCHW", "NHWC", "ND", "CHWN", "HWCN", "NDHWC", "NCDHW"}
CONVERTED = {"NC1HWC0", "NC1HWC0_C04", "FRACTAL_Z", "FRACTAL_NZ"}


class FormatError(TriageError, ValueError):
    """A stored shape that does not fit its format and original shape."""


def format_name(code: int) -> str:
    """The format's name, or 'code N' for one this table does not know.

    >>> format_name(29), format_name(99)
    ('FRACTAL_NZ', 'code 99')
    """
    return FORMATS.get(code, f"code {code}")


def to_original(data: np.ndarray, fmt: str, shape: tuple[int, ...], original: tuple[int, ...]) -> np.ndarray:
    """The stored array (flat, of ``shape`` in format ``fmt``) in its original layout and shape.

    >>> x = np.arange(3 * 2 * 2).reshape(1, 3, 2, 2)                  # NCHW, C = 3
    >>> c0 = np.zeros((1, 1, 2, 2, 4), x.dtype); c0[..., :3] = x.transpose(0, 2, 3, 1)[:, None]
    >>> bool((to_original(c0.ravel(), "NC1HWC0", c0.shape, x.shape) == x).all())
    True
    """
    stored = data.reshape(shape)
    if fmt in PLAIN or not original or tuple(original) == tuple(shape):
        return stored
    if fmt in ("NC1HWC0", "NC1HWC0_C04"):
        return _from_nc1hwc0(stored, original)
    if fmt == "FRACTAL_NZ":
        return _from_fractal_nz(stored, original)
    if fmt == "FRACTAL_Z":
        return _from_fractal_z(stored, original)
    raise FormatError(f"format {fmt} is not converted back to its original shape")


def conversion_problem(fmt: str, shape: tuple[int, ...], original: tuple[int, ...]) -> str | None:
    """Why a stored shape cannot be turned into its original one, or None; nothing is allocated (the
    conversion runs on a zero-stride array).

    >>> conversion_problem("NC1HWC0", (1, 1, 2, 2, 16), (1, 3, 2, 2)) is None
    True
    >>> conversion_problem("NC1HWC0", (1, 1, 2, 2, 16), (1, 20, 2, 2))
    'stored (1, 1, 2, 2, 16) does not hold the original NCHW (1, 20, 2, 2)'
    """
    if fmt not in CONVERTED or not original or tuple(original) == tuple(shape):
        return None
    flat = np.broadcast_to(np.uint8(0), (int(np.prod(shape, dtype=np.int64)),))
    try:
        converted = to_original(flat, fmt, shape, original)
    except (FormatError, ValueError) as exc:
        return str(exc)
    if tuple(converted.shape) != tuple(original):
        return f"stored {tuple(shape)} converts to {tuple(converted.shape)}, not the original {tuple(original)}"
    return None


def _from_nc1hwc0(x: np.ndarray, original: tuple[int, ...]) -> np.ndarray:
    if x.ndim != 5 or len(original) != 4:
        raise FormatError(f"NC1HWC0 needs a 5-d stored shape and a 4-d original, not {x.shape} / {original}")
    n, c1, h, w, c0 = x.shape
    if (n, h, w) != tuple(original[i] for i in (0, 2, 3)) or c1 * c0 < original[1]:
        raise FormatError(f"stored {x.shape} does not hold the original NCHW {original}")
    return x.transpose(0, 1, 4, 2, 3).reshape(n, c1 * c0, h, w)[:, : original[1]]


def _from_fractal_nz(x: np.ndarray, original: tuple[int, ...]) -> np.ndarray:
    """(..., W1, H1, H0, W0) tiles of a (..., H, W) matrix."""
    if x.ndim < 4 or len(original) < 2:
        raise FormatError(f"FRACTAL_NZ needs (..., W1, H1, H0, W0), not {x.shape} for {original}")
    *batch, w1, h1, h0, w0 = x.shape
    h, w = original[-2:]
    if h1 * h0 < h or w1 * w0 < w:
        raise FormatError(f"stored {x.shape} does not hold the original {original}")
    nd = len(batch)
    axes = (*range(nd), nd + 1, nd + 2, nd, nd + 3)
    full = x.transpose(axes).reshape(*batch, h1 * h0, w1 * w0)[..., :h, :w]
    return full.reshape(original)


def _from_fractal_z(x: np.ndarray, original: tuple[int, ...]) -> np.ndarray:
    """(C1*H*W, N1, N0, C0) fractals of NCHW weights."""
    if len(original) != 4:
        raise FormatError(f"FRACTAL_Z needs a 4-d original NCHW shape, not {original}")
    n, c, h, w = original
    if x.ndim != 4 or x.shape[0] % (h * w):
        raise FormatError(f"stored {x.shape} does not hold the original NCHW {original}")
    c1hw, n1, n0, c0 = x.shape
    c1 = c1hw // (h * w)
    if c1 * c0 < c or n1 * n0 < n:
        raise FormatError(f"stored {x.shape} does not hold the original NCHW {original}")
    full = x.reshape(c1, h, w, n1 * n0, c0).transpose(3, 0, 4, 1, 2).reshape(n1 * n0, c1 * c0, h, w)
    return full[:n, :c]
