"""Terminal output helpers shared by the commands: a rich console for stdout and one for stderr, each showing the
control characters of the text it prints as \\xNN (visible_text.py): names from an export reach the terminal; and
streams that write what their encoding cannot hold as escapes."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.text import Text

from analyzer.visible_text import visible


class VisibleConsole(Console):
    """A console whose every string (printed, or a table's cell) has its control characters shown as \\xNN; the
    styles rich itself writes are not text of its, and stay escape sequences."""

    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(visible(text), **options)


out = VisibleConsole(highlight=False, soft_wrap=True)
_err = VisibleConsole(stderr=True, highlight=False, soft_wrap=True)


def err(message: str) -> None:
    """One message on stderr, printed as is (no markup)."""
    _err.print(message, markup=False)


def tolerant_streams() -> None:
    """stdout and stderr write a character their encoding cannot hold as an escape (``\\xc4``, ``\\U0001f600``)
    instead of failing the command: in a GBK or Latin-1 locale, Python's stdout has that locale's encoding, and an
    export's operator names are any Unicode."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
