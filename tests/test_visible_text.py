"""Control characters of an export's names and cells never reach the user's terminal, Markdown or page as
themselves (a hostile file's escape sequence would retitle or recolour the terminal): every output of text shows
them as \\xNN, while the tables and diagnosis.json keep the names as they are."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.cli.console import VisibleConsole
from analyzer.report.terminal import print_diagnosis
from tests.malformed import base_exports as base

# An xterm title (OSC ... BEL), a colour and a colour reset, inside an operator type.
HOSTILE_TYPE = "Conv\x1b]0;pwned\x07\x1b[31mRED\x1b[0m2D"
SHOWN = r"Conv\x1b]0;pwned\x07\x1b[31mRED\x1b[0m2D"
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _export(tmp_path: Path) -> Path:
    root = base.write_torch_text(tmp_path / "in")
    kernels = root / base.APO / "kernel_details.csv"
    lines = kernels.read_bytes().decode("utf-8").replace("Conv2D", HOSTILE_TYPE).split("\r\n")
    # a number cell (Step Id) of the Add row holding a bell and an escape: that row is skipped, and the problem
    # quotes the cell
    cells = lines[5].split(",")
    cells[0] = "\x07\x1b[2J"
    lines[5] = ",".join(cells)
    kernels.write_bytes("\r\n".join(lines).encode("utf-8"))
    return tmp_path / "in"


@pytest.mark.slow  # the command in a process of its own
def test_a_hostile_name_and_cell_reach_no_output_of_text_as_control_characters(tmp_path):
    export = _export(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "analyzer", "diagnose", str(export), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    for name, text in {"stdout": proc.stdout, "stderr": proc.stderr}.items():
        assert not RAW.search(text.replace("\r", "")), (name, text)
    assert SHOWN in proc.stdout  # the finding's subject, in the TSV of a pipe
    assert r"\x07\x1b[2J" in proc.stderr  # the skipped row's problem quotes its cell
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    for page, shown in (("diagnosis.md", SHOWN.replace("\\", "\\\\")), ("report.html", SHOWN)):  # Markdown doubles \
        text = (run / page).read_text(encoding="utf-8")
        assert not RAW.search(text.replace("\r", "")), page
        assert shown in text, page
    diagnosis = json.loads((run / "diagnosis.json").read_text(encoding="utf-8"))
    assert HOSTILE_TYPE in {f["subject"] for f in diagnosis["findings"]}  # the data, as it is
    assert any(r"\x07\x1b[2J" in p["problem"] for p in diagnosis["ingest_problems"])


def test_a_terminal_shows_the_name_escaped_and_keeps_its_own_colours(tmp_path):
    """On a terminal (rich's tables and lines), the name's escape sequences are text; rich's styles still are
    escape sequences."""
    from analyzer.api import diagnose, load

    with load(_export(tmp_path), logs=False) as trace:
        diagnosis = diagnose(trace)
    buffer = io.StringIO()
    print_diagnosis(diagnosis, VisibleConsole(file=buffer, force_terminal=True, width=300, highlight=False))
    shown = buffer.getvalue()
    assert "\x1b]0;pwned" not in shown and "\x07" not in shown
    assert SHOWN in shown
    assert "\x1b[" in shown  # rich's own styles
