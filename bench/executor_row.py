"""Benchmark row: `npu-triage batch` of one generated archive through the local pool and through Dask, side by side.

Each executor gets the same worker count; every command runs alone, the executors interleaved
round by round, and the median wall time is reported with the largest peak RSS. Peak RSS is
sampled every 100 ms over the batch's whole process tree (driver, workers, and for Dask the
scheduler and nannies), as the sum over processes and as the largest single process. The
catalogs of both executors must be equal table by table, or the row is not written.
"""

from __future__ import annotations

import os
import platform
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench.doc_sections import write_marked_section
from bench.measure import median

START, END = "<!-- dask:start -->", "<!-- dask:end -->"


@dataclass(frozen=True)
class TreeMeasurement:
    """Wall seconds, CPU seconds of the whole tree, peak RSS of the tree (sum and largest process, MB), exit code."""

    wall_s: float
    cpu_s: float
    peak_tree_rss_mb: float
    peak_process_rss_mb: float
    exit_code: int


def measure_tree(cmd: list[str], log: Path, cwd: Path | None = None) -> TreeMeasurement:
    """Run ``cmd`` (in ``cwd``: `python -m analyzer` imports the checkout it starts in) and sample the RSS
    of it and all its descendants every 100 ms until it exits.

    CPU time (user + system) is the larger of two lower bounds: the sum over every process of the tree
    as last sampled (it has a worker that its parent never waits for, but misses what each did after its
    last sample and a worker that lived less than 100 ms), and what ``wait4`` reports for the command
    (itself and every descendant it waited for, to the end). It is less sensitive than wall time to other
    work on a shared machine.
    """
    import psutil  # comes with the dask extra, which this row needs anyway

    peak_sum = peak_one = 0
    cpu: dict[int, float] = {}
    start = time.perf_counter()
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
        root = psutil.Process(proc.pid)
        while True:
            rss = []
            for p in [root, *root.children(recursive=True)]:
                try:
                    with p.oneshot():
                        rss.append(p.memory_info().rss)
                        times = p.cpu_times()
                        cpu[p.pid] = times.user + times.system
                except psutil.Error:  # exited between the listing and the reading
                    continue
            peak_sum, peak_one = max(peak_sum, sum(rss)), max([peak_one, *rss])
            pid, status, usage = _reaped_within(proc.pid, 0.1)
            if pid:
                break
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    waited = usage.ru_utime + usage.ru_stime
    return TreeMeasurement(wall, max(sum(cpu.values()), waited), peak_sum / 1e6, peak_one / 1e6, proc.returncode)


def _reaped_within(pid: int, seconds: float) -> tuple[int, int, resource.struct_rusage]:
    """``os.wait4`` of the process, looked at every 10 ms for ``seconds`` (the next sample) or until it has
    exited: pid 0 while it runs. Its end is seen within 10 ms, so wall times stay exact."""
    deadline = time.perf_counter() + seconds
    while True:
        pid_done, status, usage = os.wait4(pid, os.WNOHANG)
        if pid_done or time.perf_counter() >= deadline:
            return pid_done, status, usage
        time.sleep(0.01)


def batch_command(root: Path, catalog: Path, executor: str, workers: int, rules: list[str]) -> list[str]:
    return [
        sys.executable, "-m", "analyzer", "batch", str(root), "--catalog", str(catalog),
        "--jobs", str(workers), "--executor", executor, *rules,
    ]  # fmt: skip


def section(rows: dict[str, list[TreeMeasurement]], runs: int, workers: int, load: tuple[float, ...]) -> str:
    """The Markdown section of docs/benchmark.md, markers included."""
    lines = [
        START,
        "## Batch: local process pool against Dask",
        "",
        f"`npu-triage batch` of one generated archive of {runs} runs ({runs - 1} `healthy` exports as folders, "
        "zips and a .tgz, one corrupt zip), rules on, {w} workers each (the local pool's `--jobs {w}`; "
        "`--executor dask` with a local cluster of {w} worker processes). Median of {n} interleaved run(s); "
        "CPU time and peak RSS sampled every 100 ms over the whole process tree. Dask's time includes starting its "
        "local cluster (scheduler, nannies, workers), as a user's `--executor dask` without `--scheduler` does.".format(
            w=workers, n=len(next(iter(rows.values())))
        ),
        "",
        "| executor | wall s | runs/s | CPU s (user + system) | peak RSS, all processes MB | "
        "peak RSS, largest process MB |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, samples in rows.items():
        wall = median([s.wall_s for s in samples])
        lines.append(
            f"| {name} | {wall:.1f} | {(runs - 1) / wall:.2f} | {median([s.cpu_s for s in samples]):.1f} | "
            f"{max(s.peak_tree_rss_mb for s in samples):.0f} | {max(s.peak_process_rss_mb for s in samples):.0f} |"
        )
    lines += [
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}. "
        f"The machine was shared with other work while measuring (load average {load[0]:.1f} / {load[1]:.1f} / "
        f"{load[2]:.1f} over 1 / 5 / 15 min at the start; the benchmark itself ran under `nice -n 10`), "
        "so the times carry that contention. "
        "Both executors wrote equal catalogs (compared table by table).",
        "",
        "Regenerate: `python bench/batch_archive.py --executor-row --runs 200 --workers 2`.",
        END,
    ]
    return "\n".join(lines) + "\n"


def write_section(doc: Path, text: str) -> None:
    """Replace the marked section of ``doc`` (append it, or create the file, when absent)."""
    write_marked_section(doc, text, START, END)
