"""Run one command as a child process and measure its wall time and peak resident memory."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Measurement:
    """Wall seconds and peak RSS (MB: 10^6 bytes, the unit of the benchmark's file sizes) of one
    finished process, with its exit code."""

    wall_s: float
    peak_rss_mb: float
    exit_code: int


# Runs the measured command from an interpreter of its own, a few MiB large, and writes the
# command's wall time, peak RSS (KiB) and exit code to the file descriptor given. Linux keeps a
# process's peak RSS across exec, and a process started by the benchmark begins as a copy (or, under
# vfork, a borrower) of the benchmark's own memory: started directly, a command reported at least
# the peak RSS the benchmark process ever had. Forked from this small launcher instead, it carries at
# most the launcher's.
_LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    except OSError as exc:
        print(f"cannot run {sys.argv[2]}: {exc}", file=sys.stderr, flush=True)
    os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
os.write(int(sys.argv[1]), f"{wall} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}".encode())
"""


def measure(cmd: list[str], log: Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> Measurement:
    """Run ``cmd`` (stdout and stderr into ``log``) and measure it with ``os.wait4``, from a small
    launcher process (``_LAUNCHER``) so that the benchmark's own memory is not counted.

    The peak RSS is the kernel's ``ru_maxrss`` of the process (the largest of it and the children
    it waited for), so a tool's helper processes count too. The kernel counts it in KiB; it is
    converted to MB (10^6 bytes) like every file size of the benchmark, so that their ratio (the
    RSS target) compares like with like.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    read_end, write_end = os.pipe()
    launcher = [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(write_end), *cmd]
    with os.fdopen(read_end, "rb") as report:
        try:
            with log.open("wb") as out:
                subprocess.run(
                    launcher, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env, pass_fds=(write_end,), check=True
                )
        finally:
            os.close(write_end)  # the launcher's copy is closed too, so the read below ends
        wall, maxrss_kib, exit_code = report.read().split()
    return Measurement(wall_s=float(wall), peak_rss_mb=int(maxrss_kib) * 1024 / 1e6, exit_code=int(exit_code))


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
