"""JSON text as ``json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False, default=str)`` writes it, byte for
byte, written by orjson's C encoder when it can (Python's encoder takes its slow pure-Python path once indent is set).

orjson writes what both encoders write alike: str keys, str, int, float, bool, None, dict, list, tuple, UUID, and
subclasses of str, int, dict and list, with the same escapes (ensure_ascii=False), shortest float digits and key
order. It differs on NaN and infinity (null, not NaN), on floats under 1e-4 (0.00005, not 5e-05) and on plain
Enums (their value, not str()): a document must hold none of them, as those of ``json_export.fixed`` do not.
Anything else it would write differently (datetime, dataclass, numpy, Decimal, an int past 64 bits, a surrogate)
is refused and the document goes to Python's encoder.
"""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson
except ImportError:  # the standard encoder writes the same text, slower
    orjson = None  # type: ignore[assignment]

_OPTIONS = 0 if orjson is None else (
    orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
)  # fmt: skip


def _refuse(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is left to Python's encoder")


def indented_json(doc: Any) -> str:
    """``doc`` (no NaN or infinity, no float under 1e-4 but 0, no plain Enum) as indented, key-sorted JSON text
    without a trailing newline; any other value is written with str(), as json.dumps's ``default=str`` does."""
    if orjson is not None:
        try:
            return orjson.dumps(doc, default=_refuse, option=_OPTIONS).decode("utf-8")
        except TypeError:  # orjson.JSONEncodeError is one
            pass
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False, default=str)
