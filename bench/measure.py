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
    finished process, with its exit code and CPU seconds (user + system, its waited-for children
    included)."""

    wall_s: float
    peak_rss_mb: float
    exit_code: int
    cpu_s: float = 0.0


# Runs the measured command from an interpreter of its own, a few MiB large, and writes the
# command's wall time, peak RSS (KiB), exit code and CPU seconds to the file descriptor given. Linux keeps a
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
cpu = usage.ru_utime + usage.ru_stime
os.write(int(sys.argv[1]), f"{wall} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)} {cpu}".encode())
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
        wall, maxrss_kib, exit_code, cpu = report.read().split()
    return Measurement(float(wall), int(maxrss_kib) * 1024 / 1e6, int(exit_code), float(cpu))


def median_of(samples: list[Measurement]) -> Measurement:
    """One measurement for repeated runs: the median wall time (the middle run for an odd count)
    and CPU time, the largest peak RSS, and the first failing exit code (0 when every run succeeded)."""
    failed = [m.exit_code for m in samples if m.exit_code != 0]
    return Measurement(
        wall_s=median([m.wall_s for m in samples]),
        peak_rss_mb=max(m.peak_rss_mb for m in samples),
        exit_code=failed[0] if failed else 0,
        cpu_s=median([m.cpu_s for m in samples]),
    )


def median(values: list[float]) -> float:
    """The middle value (the mean of the two middle ones for an even count).

    >>> median([3.0, 1.0, 2.0]), median([1.0, 2.0])
    (2.0, 1.5)
    """
    v = sorted(values)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2
