"""Run one command as a child process and measure its wall time and peak resident memory."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Measurement:
    """Wall seconds and peak RSS (MB: 10^6 bytes, the unit of the benchmark's file sizes) of one
    finished process, with its exit code."""

    wall_s: float
    peak_rss_mb: float
    exit_code: int


def measure(
    cmd: list[str], log: Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Measurement:
    """Run ``cmd`` (stdout and stderr into ``log``) and measure it with ``os.wait4``.

    The peak RSS is the kernel's ``ru_maxrss`` of the process (the largest of it and the children
    it waited for), so a tool's helper processes count too. The kernel counts it in KiB; it is
    converted to MB (10^6 bytes) like every file size of the benchmark, so that their ratio (the
    RSS target) compares like with like.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    peak_mb = usage.ru_maxrss * 1024 / 1e6
    return Measurement(wall_s=wall, peak_rss_mb=peak_mb, exit_code=proc.returncode)


def median_of(samples: list[Measurement]) -> Measurement:
    """One measurement for repeated runs: the median wall time (the middle run for an odd count),
    the largest peak RSS, and the first failing exit code (0 when every run succeeded)."""
    walls = sorted(m.wall_s for m in samples)
    mid = len(walls) // 2
    wall = walls[mid] if len(walls) % 2 else (walls[mid - 1] + walls[mid]) / 2
    failed = [m.exit_code for m in samples if m.exit_code != 0]
    return Measurement(
        wall_s=wall,
        peak_rss_mb=max(m.peak_rss_mb for m in samples),
        exit_code=failed[0] if failed else 0,
    )
