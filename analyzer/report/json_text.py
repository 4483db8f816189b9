"""JSON text byte for byte as json.dumps writes it (diagnosis.json's indented form, the charts' compact form), by
orjson's C encoder when it can (Python's encoder takes its slow pure-Python path once indent is set).

orjson writes what both encoders write alike: str keys, str, int, float, bool, None, dict, list, tuple, UUID, and
subclasses of str, int, dict and list, with the same escapes (ensure_ascii=False), shortest float digits and key
order. It differs on NaN and infinity (null, not NaN), on floats under 1e-4 (0.00005, not 5e-05) and on plain
Enums (their value, not str()): a document must hold none of them, as those of ``json_export.fixed`` do not.
Anything else it would write differently (datetime, dataclass, numpy, Decimal, an int past 64 bits, a surrogate)
is refused and the document goes to Python's encoder.
"""

from __future__ import annotations

import json
import re
from typing import Any

try:
    import orjson
except ImportError:  # the standard encoder writes the same text, slower
    orjson = None  # type: ignore[assignment]

_COMPACT = 0 if orjson is None else orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_OPTIONS = 0 if orjson is None else _COMPACT | orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS


# orjson writes an exponent with its sign (1e+16, 1e-7), as Python does, but 0.00005 where Python writes 5e-05.
_SIGNED_E = re.compile(rb"e[-+]")  # starting with a literal: searched fast
_DIGITS = frozenset(b"0123456789.")


def _written_otherwise(text: bytes) -> bool:
    """Whether orjson's compact ``text`` may differ from json.dumps's: a DEL (json's ASCII text escapes it), an
    exponent, or a number under 1e-4 (each only maybe, when the like is inside a string: that text goes to
    Python's encoder too). Searched for as plain bytes first: most texts hold none."""
    if b"\x7f" in text or any(text[m.start() - 1] in _DIGITS for m in _SIGNED_E.finditer(text, 1)):
        return True
    at = text.find(b"0.0000")
    while at >= 0:
        if at == 0 or text[at - 1] not in _DIGITS:
            return True
        at = text.find(b"0.0000", at + 1)
    return False


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


def compact_json(value: Any) -> str | None:
    """``value`` (no plain Enum) as ``json.dumps(value, separators=(",", ":"))`` writes it, NaN and infinity then
    made null, by orjson; None when orjson is absent or could write it otherwise (text that is not ASCII, which
    json escapes; a number json writes with an exponent; a type orjson does not write alike)."""
    if orjson is None:
        return None
    try:
        text = orjson.dumps(value, default=_refuse, option=_COMPACT)
    except TypeError:
        return None
    return text.decode("ascii") if text.isascii() and not _written_otherwise(text) else None
