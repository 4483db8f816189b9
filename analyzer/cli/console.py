"""Terminal output helpers shared by the commands: a rich console for stdout and one for stderr."""

from __future__ import annotations

from rich.console import Console

out = Console(highlight=False, soft_wrap=True)
_err = Console(stderr=True, highlight=False, soft_wrap=True)


def err(message: str) -> None:
    """One message on stderr, printed as is (no markup)."""
    _err.print(message, markup=False)
