"""Lone UTF-16 surrogate escapes in JSON text (``"\\udcff"``: what Python writes for a byte of a non-UTF-8
path): DuckDB's JSON parser rejects them, and with them a whole array of events. A copy of the file with
each lone one replaced by ``\\ufffd`` reads whole; valid surrogate pairs are kept."""

from __future__ import annotations

import re
from pathlib import Path

# A valid pair (high then low surrogate), or a lone high or low surrogate escape.
_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_PAIR_LENGTH = 12
_CHUNK = 1 << 20


def _replace(match: re.Match) -> bytes:
    return match.group(0) if len(match.group(0)) == _PAIR_LENGTH else b"\\ufffd"


def copy_without_lone_surrogates(src: Path, dst: Path) -> int:
    """Copy ``src`` to ``dst`` with every lone surrogate escape replaced by ``\\ufffd``; returns how many
    were replaced (0: the file holds none, and ``dst`` is a plain copy).

    >>> import tempfile; d = Path(tempfile.mkdtemp())
    >>> _ = (d / "a").write_bytes(b'["\\\\udcff", "\\\\ud83d\\\\ude00"]')
    >>> copy_without_lone_surrogates(d / "a", d / "b"), (d / "b").read_bytes()
    (1, b'["\\\\ufffd", "\\\\ud83d\\\\ude00"]')
    """
    replaced = 0
    carry = b""
    with src.open("rb") as fin, dst.open("wb") as fout:
        while chunk := fin.read(_CHUNK):
            data, carry = _split(carry + chunk)
            replaced += _lone(data)
            fout.write(_SURROGATE.sub(_replace, data))
        replaced += _lone(carry)
        fout.write(_SURROGATE.sub(_replace, carry))
    return replaced


def _split(data: bytes) -> tuple[bytes, bytes]:
    """``data`` cut before an escape (or a pair of escapes) that the next chunk may complete."""
    cut = data.rfind(b"\\", max(0, len(data) - _PAIR_LENGTH))
    if cut < 0:
        return data, b""
    if cut >= 6 and re.fullmatch(rb"\\u[dD][89abAB][0-9a-fA-F]{2}", data[cut - 6 : cut]):
        cut -= 6  # a high surrogate whose low half may follow
    return data[:cut], data[cut:]


def _lone(data: bytes) -> int:
    return sum(1 for m in _SURROGATE.finditer(data) if len(m.group(0)) != _PAIR_LENGTH)
