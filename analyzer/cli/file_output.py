"""Options that take one output file (diff --json/--markdown/--html, sweep --html): '-' means stdout."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from analyzer.atomic_files import write_text_atomically
from analyzer.cli.console import err, out
from analyzer.cli.output_paths import FILE, Output
from analyzer.cli.usage import UsageError

STDOUT = "-"


def is_stdout(path: Path | str | None) -> bool:
    """True for the '-' of `--json -`."""
    return path is not None and str(path) == STDOUT


def file_outputs(options: dict[str, Path | None]) -> list[Output]:
    """The given file options (option -> path) to check before any work, without the one sent to stdout;
    two options on stdout would mix their texts, so that is refused."""
    on_stdout = [option for option, path in options.items() if is_stdout(path)]
    if len(on_stdout) > 1:
        raise UsageError(f"{' and '.join(on_stdout)}: only one output can go to stdout ('-'); give the others files")
    return [Output(option, path, FILE) for option, path in options.items() if path and not is_stdout(path)]


def write_file_output(path: Path, text: str) -> None:
    """The text into the file (atomically) with a 'wrote FILE' line, or alone on stdout for '-'."""
    if is_stdout(path):
        _write_utf8(text)
        return
    written = write_text_atomically(path, text)
    if sys.stdout.isatty():
        out.print(f"wrote {written}", markup=False)
    else:  # stdout carries the command's TSV: the line goes with the other messages
        err(f"wrote {written}")


def write_html_output(path: Path, render: Callable[[str | None], str], self_contained: bool = False) -> None:
    """An HTML page: plotly.js shared beside the file, or inlined in a page sent to stdout (nothing beside it)
    or asked to be ``self_contained``."""
    from analyzer.report.plotly_asset import plotly_src, write_plotly_js

    inline = self_contained or is_stdout(path)
    src = None if inline else plotly_src(path, write_plotly_js(Path(path).parent))
    write_file_output(path, render(src))


def _write_utf8(text: str) -> None:
    """The file's text on stdout as the file's bytes (UTF-8), whatever the terminal's encoding: a GBK locale's
    stdout would write what GBK lacks as escapes, which are no JSON, Markdown or HTML."""
    sys.stdout.flush()
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:  # a text-only stream (one put in sys.stdout by a caller)
        sys.stdout.write(text)
    else:
        binary.write(text.encode("utf-8"))
        binary.flush()
