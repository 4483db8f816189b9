"""Hard stops with real processes and signals: Ctrl-C, SIGTERM and kill -9 of a batch and of a diagnosis.

A batch runs in its own session (its own process group, as a shell gives a command): after the
stop, no process of that group may still run (workers, resource tracker), and no
temporary extraction may remain (after kill -9, the next batch removes it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.real_process_fixtures import GROUP

# real processes and signals over four generated exports (big_tree, shared with the Dask modules)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(GROUP)]

TRACEBACK = "Traceback (most recent call last)"
ROOT = Path(__file__).resolve().parent.parent


def _live_group(pgid: int) -> list[tuple[int, str]]:
    """(pid, command) of every process of the group that is not a zombie."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append((int(entry.name), cmd))
    return found


def _wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"not within {seconds} s: {what}")


def _start_batch(tree: Path, tmp_path: Path, jobs: int = 2) -> tuple[subprocess.Popen, Path]:
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "analyzer",
            "batch",
            str(tree),
            "--catalog",
            str(tmp_path / "c.duckdb"),
            "--jobs",
            str(jobs),
            "--no-diagnose",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(scratch)},
        start_new_session=True,
    )
    # at work: the driver, its resource tracker and the workers
    _wait_for(lambda: len(_live_group(proc.pid)) >= 2 + jobs, 60, "the batch's workers start")
    _wait_for(lambda: any(scratch.glob("npu-triage-batch-*/*/*")), 60, "the zip is unpacked")
    _wait_for(lambda: any(scratch.glob("npu-triage-batch-*/npu-triage-spill-*")), 60, "a worker analyses an export")
    return proc, scratch


@pytest.mark.parametrize(("how", "code"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_batch_stopped_ends_its_whole_group_and_removes_its_extractions(how, code, big_tree, tmp_path):
    proc, scratch = _start_batch(big_tree, tmp_path)
    if how == "SIGTERM":
        os.kill(proc.pid, signal.SIGTERM)  # `kill PID`
    else:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole foreground group
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert TRACEBACK not in err and "internal error" not in err, err
    assert ("terminated" if how == "SIGTERM" else "interrupted") in err
    _wait_for(lambda: not _live_group(proc.pid), 5, f"the group ends: {_live_group(proc.pid)}")
    assert not list(scratch.iterdir()), "temporary extractions left behind"


def test_batch_killed_leaves_workers_that_exit_within_seconds(big_tree, tmp_path):
    proc, scratch = _start_batch(big_tree, tmp_path)
    # at work (a worker's spill folder is there): the workers spill inside the batch's folder, nowhere beside it
    beside = [p.name for p in scratch.iterdir() if not p.name.startswith("npu-triage-batch-")]
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    _wait_for(lambda: not _live_group(proc.pid), 5, f"the workers notice: {_live_group(proc.pid)}")
    assert beside == []
    assert list(scratch.glob("npu-triage-batch-*")), "a killed batch cannot remove its extraction"
    (tmp_path / "empty").mkdir()
    again = subprocess.run(
        [sys.executable, "-m", "analyzer", "batch", str(tmp_path / "empty"), "--catalog", str(tmp_path / "d.duckdb")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(scratch)},
        timeout=120,
    )
    assert again.returncode == 2, again.stderr
    # the workers' DuckDB spill folders were inside the batch's folder, and no pymp-* socket folder is made
    assert not list(scratch.iterdir()), "the next batch removes what a killed one left"


@pytest.mark.parametrize(
    ("sig", "code", "word"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
)
def test_diagnose_stopped_mid_query_exits_with_the_signal_code(sig, code, word, big_tree, tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "analyzer", "diagnose", str(big_tree / "run0"), "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(scratch)},
        start_new_session=True,
    )
    # into the reading of the export (DuckDB queries): its connection has made its spill folder
    _wait_for(lambda: proc.poll() is not None or list(scratch.glob("npu-triage-spill-*")), 60, "DuckDB opens")
    time.sleep(0.2)
    assert proc.poll() is None, "the diagnosis ended before the signal"
    os.kill(proc.pid, sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert word in err and "internal error" not in err and TRACEBACK not in err, err
    _wait_for(lambda: not _live_group(proc.pid), 5, "the process ends")
