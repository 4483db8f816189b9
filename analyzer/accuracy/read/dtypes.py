"""The dump header's data-type codes: name and numpy dtype (bfloat16 and float8 kinds through ml_dtypes)."""

from __future__ import annotations

from functools import cache

import numpy as np

# ml_dtypes loads only when a tensor of one of its kinds is met: its import costs about half a second of CPU
ML_DTYPES = frozenset({"bfloat16", "float8_e5m2", "float8_e4m3fn"})

# code -> (name, numpy's name of the dtype, None when numpy cannot hold it)
DATA_TYPES: dict[int, tuple[str, str | None]] = {
    0: ("undefined", None),
    1: ("float32", "float32"),
    2: ("float16", "float16"),
    3: ("int8", "int8"),
    4: ("uint8", "uint8"),
    5: ("int16", "int16"),
    6: ("uint16", "uint16"),
    7: ("int32", "int32"),
    8: ("int64", "int64"),
    9: ("uint32", "uint32"),
    10: ("uint64", "uint64"),
    11: ("bool", "bool"),
    12: ("float64", "float64"),
    16: ("complex64", "complex64"),
    17: ("complex128", "complex128"),
    27: ("bfloat16", "bfloat16"),
    28: ("int4", None),  # two per byte; ml_dtypes.int4 takes a byte each
    34: ("float8_e5m2", "float8_e5m2"),
    35: ("float8_e4m3fn", "float8_e4m3fn"),
}
_BY_NAME = {name: code for code, (name, _) in DATA_TYPES.items()}


def dtype_name(code: int) -> str:
    """The data type's name, or 'code N' when the header names one this table does not know.

    >>> dtype_name(27), dtype_name(39)
    ('bfloat16', 'code 39')
    """
    return DATA_TYPES[code][0] if code in DATA_TYPES else f"code {code}"


def numpy_dtype(code: int) -> np.dtype | None:
    """The numpy dtype of a header code, None when unknown or not representable.

    >>> numpy_dtype(2), numpy_dtype(27).name, numpy_dtype(28)
    (dtype('float16'), 'bfloat16', None)
    """
    name = DATA_TYPES.get(code, ("", None))[1]
    return None if name is None else _dtype(name)


@cache
def _dtype(name: str) -> np.dtype:
    if name in ML_DTYPES:
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def name_of(dtype: np.dtype) -> str:
    """The dump's name of a numpy dtype (a .npy file's), its numpy name when the dump has none.

    >>> name_of(np.dtype(np.float16)), name_of(numpy_dtype(27))
    ('float16', 'bfloat16')
    """
    name = np.dtype(dtype).name
    return name if name in _BY_NAME else str(name)


def is_float(dtype: np.dtype) -> bool:
    """True for the floating kinds whose values can be NaN or Inf (ml_dtypes' kinds included)."""
    return np.dtype(dtype).kind in "fc" or np.dtype(dtype).name in ML_DTYPES
