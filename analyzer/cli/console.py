"""Terminal output helpers shared by the commands: a rich console for stdout and one for stderr, each showing the
control characters of the text it prints as \\xNN (visible_text.py): names from an export reach the terminal."""

from __future__ import annotations

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
