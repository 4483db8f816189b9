"""On a terminal, diagnose's last line counts every report it wrote: a job's and its ranks' too, as the line
into a pipe does."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from analyzer.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "examples"


def _tree(root: Path) -> Path:
    """The 8-rank example job (its ranks hold summaries only: no report of their own) beside two runs of no job."""
    shutil.copytree(EXAMPLES / "job_slow_rank", root / "job_slow_rank")
    shutil.copytree(EXAMPLES / "resnet_host_sync", root / "resnet_host_sync")
    run = next(p for p in (EXAMPLES / "batch_sweep").iterdir() if p.is_dir())
    shutil.copytree(run, root / "sweep" / run.name)
    return root


def _wrote(text: str) -> tuple[int, int]:
    (line,) = re.findall(r"wrote (\d+) file\(s\) for (\d+) report\(s\)", text)
    return int(line[0]), int(line[1])


@pytest.mark.slow
def test_the_terminals_last_line_counts_the_jobs_reports_as_the_pipes_does(tmp_path, capsys, monkeypatch):
    tree = _tree(tmp_path / "in")
    argv = ["diagnose", str(tree), "--format", "json"]
    assert main([*argv, "--out", str(tmp_path / "piped")]) == 0
    piped = _wrote(capsys.readouterr().err)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main([*argv, "--out", str(tmp_path / "terminal")]) == 0
    shown = capsys.readouterr().out
    written = sum(1 for _ in (tmp_path / "terminal").rglob("diagnosis.json"))
    assert _wrote(shown) == piped == (written, written) == (3, 3)  # the job (its ranks hold summaries only), 2 runs
