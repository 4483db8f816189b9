"""Exit code 3 for a command whose output covers only part of its input: the `--allow-partial` option."""

from __future__ import annotations

import argparse

from analyzer.cli.console import err


def add_allow_partial(p: argparse.ArgumentParser, output: str) -> None:
    """--allow-partial, whose help names what still records the lost part (``output``)."""
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help=f"exit 0 (not 3) when part of the input could not be read; {output} still say what",
    )


def partial_input_code(problems: list, allow_partial: bool, covered: str) -> int:
    """3 when part of the input was lost (an 'error' problem: a file, table or the end of a file could
    not be read) so that scripts do not take a partial result for a whole one; else 0.

    ``covered`` names the result, as in "the diagnosis covers only what could be read".
    """
    lost = sorted({p.file for p in problems if p.severity == "error"})
    if not lost or allow_partial:
        return 0
    err(
        f"npu-triage: {covered} only what could be read: part of the input was lost "
        f"({', '.join(lost)}); exit code 3 (use --allow-partial to exit 0)"
    )
    return 3
