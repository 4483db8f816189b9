"""The program's processes run the cyclic garbage collector rarely (analyzer/collector.py): the command line's
process and the workers of its pools; a library caller's process keeps its own collector."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.collector import THRESHOLDS
from analyzer.runs.worker_end import StartedPool, start_worker

ROOT = Path(__file__).resolve().parents[1]


def _collector() -> tuple[tuple[int, int, int], bool]:
    return gc.get_threshold(), gc.get_freeze_count() > 0


@pytest.mark.slow
def test_the_program_runs_the_collector_rarely():
    # the collector as the program leaves it, read when the process exits (run() ends with sys.exit)
    code = (
        "import atexit, gc, sys; "
        "atexit.register(lambda: print(gc.get_threshold(), gc.get_freeze_count() > 0)); "
        "sys.argv = ['npu-triage', '--version']; from analyzer.cli import run; run()"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == f"{THRESHOLDS} True"


def test_the_api_leaves_its_callers_collector_alone():
    code = "import gc; before = gc.get_threshold(); import analyzer, analyzer.cli; print(gc.get_threshold() == before)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


@pytest.mark.slow  # a worker process: the full suite runs it
def test_a_pools_worker_runs_the_collector_rarely():
    pool = StartedPool(1, start_worker, start_now=False)
    try:
        assert pool.executor.submit(_collector).result() == (THRESHOLDS, True)
    finally:
        pool.close()
