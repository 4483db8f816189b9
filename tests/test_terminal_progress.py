"""Progress on a terminal's stderr: shown within a second on a tree of 40 runs; nothing into a pipe."""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.tiny_exports import write_tiny_export

# Whole commands over generated inputs: in the full suite, not the fast loop.
pytestmark = pytest.mark.slow

CLI = shutil.which("npu-triage")


def _tree(root: Path, n: int) -> Path:
    for i in range(n):
        write_tiny_export(root / f"group{i % 4}" / f"run_{i:02d}", seed=i, steps=3)
    return root


def _first_progress(argv: list[str], cwd: Path, needle: bytes, limit: float = 5.0) -> tuple[float | None, bytes]:
    """Run the CLI with stderr on a pseudo-terminal (stdout a pipe); the seconds until ``needle`` is on the
    terminal (None if never within ``limit``), and what it showed. The process is ended once seen."""
    master, slave = pty.openpty()
    start = time.monotonic()
    proc = subprocess.Popen([CLI, *argv], cwd=cwd, stdout=subprocess.DEVNULL, stderr=slave, env={**os.environ})
    os.close(slave)
    shown, seen = b"", None
    try:
        while time.monotonic() - start < limit and seen is None:
            if select.select([master], [], [], 0.05)[0]:
                try:
                    shown += os.read(master, 65536)
                except OSError:  # the process ended and the terminal closed
                    break
                if needle in shown:
                    seen = time.monotonic() - start
            elif proc.poll() is not None:
                break
    finally:
        proc.terminate()
        proc.wait()
        os.close(master)
    return seen, shown


@pytest.mark.skipif(CLI is None, reason="the npu-triage command is not installed")
def test_diagnose_over_40_runs_shows_progress_on_a_terminal_within_a_second(tmp_path):
    tree = _tree(tmp_path / "tree", 40)
    seen, shown = _first_progress(["diagnose", str(tree), "--out", str(tmp_path / "out")], tmp_path, b"/40")
    assert seen is not None, shown[-500:]
    # Within a second of the command being able to do anything: Python's start and the imports, which a
    # loaded machine can stretch past a second by themselves, are measured apart (the bare --version).
    start = time.monotonic()
    subprocess.run([CLI, "--version"], capture_output=True, check=True)
    startup = time.monotonic() - start
    assert seen - startup < 1.0, f"progress first shown after {seen:.2f} s, {startup:.2f} s of it to start"
    assert b"reading exports" in shown


@pytest.mark.skipif(CLI is None, reason="the npu-triage command is not installed")
def test_batch_shows_progress_on_a_terminal(tmp_path):
    tree = _tree(tmp_path / "tree", 6)
    argv = ["batch", str(tree), "--catalog", str(tmp_path / "cat.duckdb"), "--jobs", "1", "--no-diagnose"]
    seen, shown = _first_progress(argv, tmp_path, b"analysing runs", limit=10.0)
    assert seen is not None, shown[-500:]


@pytest.mark.skipif(CLI is None, reason="the npu-triage command is not installed")
def test_no_progress_when_stderr_is_a_pipe(tmp_path):
    tree = _tree(tmp_path / "tree", 3)
    done = subprocess.run(
        [CLI, "diagnose", str(tree), "--out", str(tmp_path / "out")], capture_output=True, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    for text in (b"reading exports", b"judging runs", b"writing reports", b"\r", b"\x1b["):
        assert text not in done.stderr and text not in done.stdout


@pytest.mark.skipif(CLI is None, reason="the npu-triage command is not installed")
def test_logs_shows_progress_on_a_terminal(tmp_path):
    from fixtures.logs.scenarios import write_aicore

    write_aicore(tmp_path, seed=11, noise=300)
    argv = ["logs", str(tmp_path / "aicore_error"), "--out", str(tmp_path / "out")]
    seen, shown = _first_progress(argv, tmp_path, b"judging log collections", limit=10.0)
    assert seen is not None, shown[-500:]
