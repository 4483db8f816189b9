"""Text from an export made safe to show: its control characters (but tab and newline) written as ``\\xNN``.

An export's names and cells are data and are stored as they are (the tables, diagnosis.json). Shown, they go to a
terminal, a Markdown file or a page, where a hostile file's escape sequence would retitle or recolour the user's
terminal, and its NUL bytes would break the text: every output of text shows them as ``\\x1b``, ``\\x00``.
"""

from __future__ import annotations

import re

# The C0 control characters but tab and newline, and DEL.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def visible(text: str) -> str:
    """``text`` with each control character but tab and newline written as ``\\xNN``.

    >>> visible("bad \\x00\\x1b[2J cell\\tnext")
    'bad \\\\x00\\\\x1b[2J cell\\tnext'
    """
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"
