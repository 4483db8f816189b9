"""A rule's message or note template filled in: numbers that round to zero never read as a negative zero."""

from __future__ import annotations

import string
from typing import Any


class _MessageFormatter(string.Formatter):
    """str.format, except that a negative number its format rounds to zero reads as zero: a rank 0.01 ms
    faster than its peers is "+0.0 ms" from them, not "-0.0 ms"."""

    def format_field(self, value: Any, format_spec: str) -> str:
        text = super().format_field(value, format_spec)
        if isinstance(value, float) and value <= 0.0 and text == super().format_field(-0.0, format_spec):
            return super().format_field(0.0, format_spec)
        return text


_FORMATTER = _MessageFormatter()


def fill_template(template: str, values: dict[str, Any]) -> str:
    """``template.format(**values)`` (the same errors), with no negative zero.

    >>> fill_template("{a:+.1f} ms, {b:.0%}, {c:.1f}", {"a": -0.01, "b": -0.001, "c": -0.25})
    '+0.0 ms, 0%, -0.2'
    """
    text = template.format(**values)
    # every negative zero a format writes holds "-0"; most messages have none, and str.format is faster
    return text if "-0" not in text else _FORMATTER.vformat(template, (), values)
