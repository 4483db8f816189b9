"""A terminal whose encoding cannot hold an export's names (a zh_CN.GBK or Latin-1 locale gives Python's stdout that
encoding) gets them as escapes, never an internal error: operator names are any Unicode."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.malformed import base_exports as base

NAME = "算子_融合_ÄÖ_😀"


def _export(tmp_path: Path) -> Path:
    root = base.write_torch_text(tmp_path / "in")
    kernels = root / base.APO / "kernel_details.csv"
    kernels.write_bytes(kernels.read_bytes().decode("utf-8").replace("Conv2D", NAME).encode("utf-8"))
    return tmp_path / "in"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("encoding", "shown"),
    [
        ("gbk", "算子_融合_\\xc4\\xd6_\\U0001f600"),  # GBK holds the Chinese, not the umlauts or the emoji
        ("latin-1", "\\u7b97\\u5b50_\\u878d\\u5408_ÄÖ_\\U0001f600"),
        ("ascii", "\\u7b97\\u5b50_\\u878d\\u5408_\\xc4\\xd6_\\U0001f600"),
    ],
    ids=["gbk", "latin-1", "ascii"],
)
def test_names_the_terminal_cannot_encode_are_printed_as_escapes(encoding, shown, tmp_path):
    export = _export(tmp_path)
    printed = {}
    for argv in (["diagnose", str(export), "--out", str(tmp_path / "out")], ["ingest", str(export)]):
        proc = subprocess.run(
            [sys.executable, "-m", "analyzer", *argv],
            capture_output=True,
            timeout=120,
            env={**os.environ, "PYTHONIOENCODING": encoding},
        )
        out, err = proc.stdout.decode(encoding), proc.stderr.decode(encoding)
        assert proc.returncode == 0 and "internal error" not in err, err
        printed[argv[0]] = out
    assert shown in printed["diagnose"]  # the finding's subject in the TSV
    (run,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    assert NAME in (run / "diagnosis.md").read_text(encoding="utf-8")  # files are UTF-8 whatever the terminal


@pytest.mark.slow
def test_a_file_sent_to_stdout_is_its_utf8_bytes_in_any_locale(tmp_path):
    """`diff --markdown -` in a GBK locale: stdout carries the file's own bytes (UTF-8) holding the name, not the
    terminal's encoding with escapes for what it lacks."""
    import shutil

    export = _export(tmp_path)
    shutil.copytree(export, tmp_path / "other")
    (before,) = [p for p in export.iterdir() if p.is_dir()]
    (after,) = [p for p in (tmp_path / "other").iterdir() if p.is_dir()]
    proc = subprocess.run(
        [sys.executable, "-m", "analyzer", "diff", str(before), str(after), "--markdown", "-"],
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "gbk"},
    )
    assert proc.returncode == 0, proc.stderr.decode("gbk")
    assert NAME in proc.stdout.decode("utf-8")
