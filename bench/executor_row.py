"""Benchmark row: `npu-triage batch` of one generated archive through the local pool and through Dask, side by side.

Each executor gets the same worker count; every command runs alone, the executors interleaved
round by round, and the median wall time is reported with the largest peak RSS. Peak RSS is
sampled every 100 ms over the batch's whole process tree (driver, workers, and for Dask the
scheduler and nannies), as the sum over processes and as the largest single process. The
catalogs of both executors must be equal table by table, or the row is not written.
"""

from __future__ import annotations

import contextlib
import os
import platform
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


def measure_tree(cmd: list[str], log: Path) -> TreeMeasurement:
    """Run ``cmd`` and sample the RSS of it and all its descendants every 100 ms until it exits.

    CPU time (user + system) is summed over every process of the tree as last sampled (a worker
    that its parent never waits for is missing from the kernel's children totals); it is less
    sensitive than wall time to other work on a shared machine.
    """
    import psutil  # comes with the dask extra, which this row needs anyway

    peak_sum = peak_one = 0
    cpu: dict[int, float] = {}
    start = time.perf_counter()
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        root = psutil.Process(proc.pid)
        while proc.poll() is None:
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
            with contextlib.suppress(subprocess.TimeoutExpired):  # the next sample in 100 ms, or the end now
                proc.wait(0.1)
    wall = time.perf_counter() - start
    return TreeMeasurement(wall, sum(cpu.values()), peak_sum / 1e6, peak_one / 1e6, proc.returncode)


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
