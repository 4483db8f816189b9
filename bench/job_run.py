"""Benchmark of a multi-rank job: `npu-triage diagnose JOB` against `msprof-analyze cluster -m all`.

python bench/job_run.py                  # 1,024 ranks (summaries only), 3 interleaved rounds
python bench/job_run.py --ranks 64 --repeat 1 --skip-msprof-analyze   # a quick check

The job is generated once (fixtures/generator job_large) under --out/data and reused. Both tools
run on the same job, one after the other in each round, so a change of the machine's speed hits
both alike; a row holds the median wall time and the largest peak RSS. Targets: npu-triage (findings,
diagnosis.json and the job page) in at most half msprof-analyze's time, peak RSS under 1 GB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import msprof_analyze  # noqa: E402
from bench.measure import Measurement, measure, median_of  # noqa: E402
from bench.results import machine, write_json_atomically  # noqa: E402
from fixtures.generator.job_layout import write_job  # noqa: E402
from fixtures.generator.job_scenarios import job_plan  # noqa: E402

MAX_RATIO = 0.5
MAX_RSS_MB = 1000.0


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python bench/job_run.py", description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=1024)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", type=Path, default=ROOT / "reports" / "bench-job")
    p.add_argument("--venv", type=Path, help="msprof-analyze venv (default: reports/bench/msprof-venv)")
    p.add_argument("--skip-msprof-analyze", action="store_true")
    return p.parse_args(argv)


def _job(out: Path, ranks: int) -> Path:
    root = out / "data" / f"job_large_{ranks}"
    if not (root / "job_large" / "job_truth.json").exists():
        shutil.rmtree(root, ignore_errors=True)
        write_job(job_plan("job_large", ranks, 0, 3), root)
    return root / "job_large"


def _commands(job: Path, work: Path, tool: Path | None, run: int) -> dict[str, list[str]]:
    cmds = {
        "npu-triage diagnose": [
            sys.executable,
            "-m",
            "analyzer",
            "diagnose",
            str(job),
            "--out",
            str(work / f"npu-triage_{run}"),
            "--format",
            "json,html",
        ],
    }
    if tool:
        cmds["msprof-analyze cluster -m all"] = [
            str(tool),
            "cluster",
            "-d",
            str(job),
            "-m",
            "all",
            "-o",
            str(work / f"msprof-analyze_{run}"),
        ]
    return cmds


def run(args: argparse.Namespace) -> dict:
    job = _job(args.out, args.ranks)
    tool = (
        None
        if args.skip_msprof_analyze
        else msprof_analyze.ensure_venv(args.venv or ROOT / "reports" / "bench" / "msprof-venv")
    )
    work = args.out / "runs"
    samples: dict[str, list[Measurement]] = {}
    env = {k: v for k, v in os.environ.items() if k != "NPU_TRIAGE_MEMORY_LIMIT"}
    for run_no in range(1, args.repeat + 1):
        before = msprof_analyze.tree_digest(job)
        for name, cmd in _commands(job, work, tool, run_no).items():
            m = measure(cmd, work / f"{name.split()[0]}_{run_no}.log", cwd=ROOT, env=env)
            if m.exit_code not in (0, 1):
                raise SystemExit(f"{name} failed (exit {m.exit_code}); see {work}")
            samples.setdefault(name, []).append(m)
        if msprof_analyze.tree_digest(job) != before:
            raise SystemExit(f"a tool wrote inside the job folder {job}")
    rows = {name: median_of(ms) for name, ms in samples.items()}
    ours = rows["npu-triage diagnose"]
    theirs = rows.get("msprof-analyze cluster -m all")
    ratio = ours.wall_s / theirs.wall_s if theirs else None
    return {
        "ranks": args.ranks,
        "repeats": args.repeat,
        "machine": machine(),
        "load_average": list(os.getloadavg()),
        "rows": {
            name: {
                "wall_s": round(m.wall_s, 3),
                "peak_rss_mb": round(m.peak_rss_mb, 1),
                "walls_s": [round(x.wall_s, 3) for x in samples[name]],
            }
            for name, m in rows.items()
        },
        "ratio_to_msprof_analyze": None if ratio is None else round(ratio, 3),
        "meets_time_target": None if ratio is None else ratio <= MAX_RATIO,
        "meets_rss_target": ours.peak_rss_mb < MAX_RSS_MB,
    }


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    doc = run(args)
    for name, row in doc["rows"].items():
        print(f"{name:<32} {row['wall_s']:8.2f} s  {row['peak_rss_mb']:8.1f} MB  runs {row['walls_s']}")
    print(
        f"ratio to msprof-analyze: {doc['ratio_to_msprof_analyze']} (target <= {MAX_RATIO}); "
        f"peak RSS under {MAX_RSS_MB:.0f} MB: {doc['meets_rss_target']}; load average {doc['load_average']}"
    )
    write_json_atomically(args.out / "job_results.json", doc)
    print(f"wrote {args.out / 'job_results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
