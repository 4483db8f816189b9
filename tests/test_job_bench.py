"""bench/job_run.py end to end on a small job, without msprof-analyze (the 1,024-rank run is the real one)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_job_bench_small_job_measures_diagnose_and_writes_results(tmp_path):
    cmd = [sys.executable, str(ROOT / "bench" / "job_run.py"), "--ranks", "16", "--repeat", "1"]
    done = subprocess.run([*cmd, "--skip-msprof-analyze", "--out", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "job_results.json").read_text())
    row = doc["rows"]["npu-triage diagnose"]
    assert row["wall_s"] > 0 and 0 < row["peak_rss_mb"] < 1000
    assert doc["ratio_to_msprof_analyze"] is None
    assert (tmp_path / "runs" / "npu-triage_1" / "job_large" / "job.html").exists()
