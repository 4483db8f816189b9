"""Benchmark row: `npu-triage diagnose JOB` in one process against its ranks read by `--executor dask|local`.

Every command runs alone, the ways interleaved round by round (the baseline checkout's one process
too, when given); the median wall and CPU time and the largest peak RSS of the whole process tree
(driver, workers, Dask's scheduler and nannies: ``executor_row.measure_tree``) are reported. The
outputs of every way must equal the one process's file for file, or no row is written.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import platform
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.doc_sections import write_marked_section  # noqa: E402
from bench.executor_row import TreeMeasurement, measure_tree  # noqa: E402
from bench.measure import median  # noqa: E402

START, END = "<!-- job-spread:start -->", "<!-- job-spread:end -->"
WAYS = {
    "one process": [],
    "--executor dask (local cluster)": ["--executor", "dask"],
    "--executor local (process pool)": ["--executor", "local"],
}


def _command(job: Path, out: Path, options: list[str], workers: int) -> list[str]:
    jobs = ["--jobs", str(workers)] if options else []
    return [sys.executable, "-m", "analyzer", "diagnose", str(job), "--out", str(out), "--format", "json"] + [
        *options,
        *jobs,
    ]


def _same_tree(a: Path, b: Path) -> bool:
    """Both folders hold the same files with the same bytes."""
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    if filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)[1:] != ([], []):
        return False
    return all(_same_tree(a / d, b / d) for d in cmp.common_dirs)


def measure(job: Path, scratch: Path, workers: int, rounds: int, baseline: Path | None) -> dict:
    """Each way's measurements, interleaved round by round; SystemExit when an output differs."""
    ways = {name: (ROOT, options) for name, options in WAYS.items()}
    if baseline:
        ways = {"one process, baseline checkout": (baseline, []), **ways}
    rows: dict[str, list[TreeMeasurement]] = {name: [] for name in ways}
    for r in range(rounds):
        for i, (name, (cwd, options)) in enumerate(ways.items()):
            out = scratch / f"way{i}"
            shutil.rmtree(out, ignore_errors=True)
            log = scratch / f"way{i}-{r}.log"
            rows[name].append(measure_tree(_command(job, out, options, workers), log, cwd=cwd))
            if i and not _same_tree(scratch / "way0", out):
                raise SystemExit(f"{name}: its outputs differ from the first way's ({out})")
    return rows


def section(rows: dict[str, list[TreeMeasurement]], job: Path, workers: int, load: tuple[float, ...], how: str) -> str:
    """The Markdown section of docs/benchmark.md, markers included."""
    ranks = sum(1 for p in job.iterdir() if p.is_dir())
    kernels = sum(1 for _ in job.glob("*/ASCEND_PROFILER_OUTPUT/kernel_details.csv"))
    walls = {name: median([s.wall_s for s in samples]) for name, samples in rows.items()}
    cpus = {name: median([s.cpu_s for s in samples]) for name, samples in rows.items()}
    base, base_cpu = walls["one process"], cpus["one process"]
    lines = [
        START,
        "## A job's ranks read by an executor",
        "",
        f"`npu-triage diagnose JOB --format json` of `{job.name}` ({ranks} ranks, {kernels} with kernel_details): "
        f"in one process, and with its ranks read by {workers} workers (`--executor dask` starting its local cluster, "
        f"`--executor local`), the job's tables, rules and reports in the parent. Median of "
        f"{len(rows['one process'])} interleaved run(s); CPU time and peak RSS over the whole process tree.",
        "",
        "| way | wall s | CPU s (user + system) | peak RSS, all processes MB | peak RSS, largest process MB "
        "| wall, CPU against one process |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, samples in rows.items():
        lines.append(
            f"| {name} | {walls[name]:.1f} | {cpus[name]:.1f} | {max(s.peak_tree_rss_mb for s in samples):.0f} | "
            f"{max(s.peak_process_rss_mb for s in samples):.0f} | {walls[name] / base:.2f}x, "
            f"{cpus[name] / base_cpu:.2f}x |"
        )
    lines += [
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; load average "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the start (shared; the benchmark ran under `nice`). "
        "Every way wrote the same files, byte for byte. "
        + _load_note(load, len(rows) > len(WAYS))
        + _verdict(walls, base),
        "",
        f"Regenerate: `python bench/job_spread.py {how}`.",
        END,
    ]
    return "\n".join(lines) + "\n"


def _load_note(load: tuple[float, ...], baseline: bool) -> str:
    """On a machine busier than its cores, wall times carry the other work more than the CPU times do."""
    if load[0] <= (os.cpu_count() or 1):
        return ""
    same = " (the one process of both checkouts runs the same reading code)" if baseline else ""
    return f"The machine was busier than its cores: the wall times carry the other work{same}, the CPU times less. "


def _verdict(walls: dict[str, float], base: float) -> str:
    """What the times say, from the times."""
    spread = {name: wall for name, wall in walls.items() if name.startswith("--executor")}
    if all(wall >= base for wall in spread.values()):
        return (
            f"On these {os.cpu_count()} cores no executor is faster than one process, which keeps the cores busy "
            "with DuckDB's threads already: the workers add their start, the tables' trip back to the parent and "
            "a second copy of them. The executors are for ranks that outgrow one machine's cores (a cluster)."
        )
    best = min(spread, key=spread.__getitem__)
    return f"Fastest: {best}, {spread[best] / base:.2f}x the one process's wall time."


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--job", type=Path, required=True, help="a job folder (read only)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--baseline", type=Path, help="another checkout, measured in one process beside this one")
    p.add_argument("--scratch", type=Path, default=ROOT / "reports" / "job-spread")
    p.add_argument("--no-docs", action="store_true", help="print the section instead of writing docs/benchmark.md")
    args = p.parse_args(argv)
    args.scratch.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    rows = measure(args.job.resolve(), args.scratch.resolve(), args.workers, args.rounds, args.baseline)
    how = f"--job {args.job} --workers {args.workers} --rounds {args.rounds}"
    how += f" --baseline {args.baseline}" if args.baseline else ""
    text = section(rows, args.job, args.workers, load, how)
    if args.no_docs:
        print(text)
    else:
        write_marked_section(ROOT / "docs" / "benchmark.md", text, START, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
