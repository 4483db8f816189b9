"""A big job's whole ``diagnose --format json,md,html`` (per-rank reports, job page, index) by two checkouts side
by side: wall time, CPU seconds and peak RSS of each command's process tree, taking turns run after run, and the
two output folders compared file by file. Prints the table and writes its section of docs/benchmark.md:

    python bench/job_writing.py --base ../wt-base --job JOB_FOLDER [--job ...] --repeat 3 --out reports/job_writing
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.doc_sections import write_marked_section  # noqa: E402
from bench.measure import Measurement, measure, median_of  # noqa: E402

START, END = "<!-- job-writing:start -->", "<!-- job-writing:end -->"
FORMATS = "json,md,html"


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python bench/job_writing.py", description=__doc__.splitlines()[0])
    p.add_argument("--base", type=Path, required=True, help="the other checkout (e.g. main's)")
    p.add_argument("--job", type=Path, action="append", required=True, help="a job folder (repeat for several)")
    p.add_argument("--repeat", type=int, default=3, help="runs of each checkout per job (the median is shown)")
    p.add_argument("--out", type=Path, default=ROOT / "reports" / "job_writing", help="where the reports go")
    p.add_argument("--no-docs", action="store_true", help="print only; leave docs/benchmark.md alone")
    return p.parse_args(argv)


def _run(checkout: Path, job: Path, out: Path) -> Measurement:
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "analyzer", "diagnose", str(job), "--format", FORMATS, "--out", str(out)]
    return measure(cmd, out.with_suffix(".log"), cwd=checkout)


def same_outputs(a: Path, b: Path) -> tuple[int, list[str]]:
    """(files compared, the relative paths that differ or are missing on one side)."""
    left = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    right = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    differ = sorted(str(p) for p in left ^ right)
    differ += sorted(str(p) for p in left & right if not filecmp.cmp(a / p, b / p, shallow=False))
    return len(left | right), differ


def measure_job(base: Path, job: Path, out: Path, repeat: int) -> dict:
    """Both checkouts on ``job``, taking turns; the medians and the comparison of the last outputs."""
    runs: dict[str, list[Measurement]] = {"base": [], "this": []}
    for _ in range(repeat):
        for name, checkout in (("base", base), ("this", ROOT)):
            runs[name].append(_run(checkout, job, out / job.parent.name / name))
    files, differ = same_outputs(out / job.parent.name / "base", out / job.parent.name / "this")
    return {
        "job": job.parent.name,
        "load": os.getloadavg()[0],
        "files": files,
        "differ": differ,
        **{name: median_of(samples) for name, samples in runs.items()},
    }


def table(rows: list[dict], commit: str) -> str:
    lines = [
        f"## Writing a big job's reports: this checkout ({commit}) against the base, side by side",
        "",
        f"`diagnose JOB --format {FORMATS}`, every rank's report, the job page and the index; median of the runs,",
        "CPU of the process tree (pool workers included), peak RSS of its largest process; load: the 1-minute",
        "load average after the runs (the machine is shared).",
        "",
        "| job | base wall s | base CPU s | base RSS MB | wall s | CPU s | CPU % | RSS MB | files | differ | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        b, t = r["base"], r["this"]
        lines.append(
            f"| {r['job']} | {b.wall_s:.2f} | {b.cpu_s:.2f} | {b.peak_rss_mb:.0f} | {t.wall_s:.2f} | {t.cpu_s:.2f} "
            f"| {100 * t.cpu_s / t.wall_s:.0f} | {t.peak_rss_mb:.0f} | {r['files']} | {len(r['differ'])} "
            f"| {r['load']:.1f} |"
        )
    return "\n".join([START, *lines, END, ""])


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    rows = [measure_job(args.base.resolve(), job.resolve(), args.out.resolve(), args.repeat) for job in args.job]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    text = table(rows, commit.strip())
    print(text)
    for r in rows:
        for path in r["differ"][:10]:
            print(f"{r['job']}: differs: {path}", file=sys.stderr)
    if not args.no_docs:
        write_marked_section(ROOT / "docs" / "benchmark.md", text, START, END)
    return 1 if any(r["differ"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
