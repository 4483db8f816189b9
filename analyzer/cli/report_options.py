"""The options of the commands that write ranked reports (diagnose, accuracy, logs): --out, --format, --fail-on."""

from __future__ import annotations

import argparse
from pathlib import Path

from analyzer.api.reports import FORMATS  # the formats the API writes, named once
from analyzer.cli.usage import UsageError
from analyzer.vocabulary import SEVERITIES


def add_report_options(p: argparse.ArgumentParser) -> None:
    """--out, --format and --fail-on, spelled and defaulted the same for every such command."""
    p.add_argument("--out", type=Path, default=Path("reports"), help="output folder (default: reports/)")
    p.add_argument("--format", default="json,md,html", help="comma-separated: json, md, html (default: all three)")
    p.add_argument("--fail-on", choices=SEVERITIES[1:], help="exit 1 when a finding has this severity or worse")


def report_formats(text: str) -> list[str]:
    """The formats a --format value names; UsageError when it names none or one that is not known.

    >>> report_formats("md, json")
    ['md', 'json']
    """
    formats = [f.strip() for f in text.split(",") if f.strip()]
    if not formats or any(f not in FORMATS for f in formats):
        raise UsageError(f"--format {text!r}: choose from {', '.join(FORMATS)}")
    return formats


def add_self_contained(p: argparse.ArgumentParser) -> None:
    """--self-contained, for the commands whose HTML pages have charts."""
    p.add_argument(
        "--self-contained",
        action="store_true",
        help="put plotly.js inside each HTML page (about 5 MB more each) instead of one shared file beside them,"
        " so that a page still draws its charts when sent on its own",
    )
