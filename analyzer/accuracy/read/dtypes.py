"""The dump header's data-type codes: name and numpy dtype (bfloat16 and float8 kinds through ml_dtypes)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

# code -> (name, numpy dtype or None when numpy cannot hold it)
DATA_TYPES: dict[int, tuple[str, np.dtype | None]] = {
    0: ("undefined", None),
    1: ("float32", np.dtype(np.float32)),
    2: ("float16", np.dtype(np.float16)),
    3: ("int8", np.dtype(np.int8)),
    4: ("uint8", np.dtype(np.uint8)),
    5: ("int16", np.dtype(np.int16)),
    6: ("uint16", np.dtype(np.uint16)),
    7: ("int32", np.dtype(np.int32)),
    8: ("int64", np.dtype(np.int64)),
    9: ("uint32", np.dtype(np.uint32)),
    10: ("uint64", np.dtype(np.uint64)),
    11: ("bool", np.dtype(np.bool_)),
    12: ("float64", np.dtype(np.float64)),
    16: ("complex64", np.dtype(np.complex64)),
    17: ("complex128", np.dtype(np.complex128)),
    27: ("bfloat16", np.dtype(ml_dtypes.bfloat16)),
    28: ("int4", None),  # two per byte; ml_dtypes.int4 takes a byte each
    34: ("float8_e5m2", np.dtype(ml_dtypes.float8_e5m2)),
    35: ("float8_e4m3fn", np.dtype(ml_dtypes.float8_e4m3fn)),
}
_BY_NAME = {name: code for code, (name, _) in DATA_TYPES.items()}


def dtype_name(code: int) -> str:
    """The data type's name, or 'code N' when the header names one this table does not know.

    >>> dtype_name(27), dtype_name(39)
    ('bfloat16', 'code 39')
    """
    return DATA_TYPES[code][0] if code in DATA_TYPES else f"code {code}"


def numpy_dtype(code: int) -> np.dtype | None:
    """The numpy dtype of a header code, None when unknown or not representable."""
    return DATA_TYPES.get(code, ("", None))[1]


def name_of(dtype: np.dtype) -> str:
    """The dump's name of a numpy dtype (a .npy file's), its numpy name when the dump has none.

    >>> name_of(np.dtype(np.float16)), name_of(np.dtype(ml_dtypes.bfloat16))
    ('float16', 'bfloat16')
    """
    name = np.dtype(dtype).name
    return name if name in _BY_NAME else str(name)


def is_float(dtype: np.dtype) -> bool:
    """True for the floating kinds whose values can be NaN or Inf (ml_dtypes' kinds included)."""
    return np.dtype(dtype).kind in "fc" or np.dtype(dtype).name in ("bfloat16", "float8_e5m2", "float8_e4m3fn")
