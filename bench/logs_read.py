"""Benchmark row: `npu-triage logs` over about 1 GB of generated plogs, wall time and peak RSS.

python bench/logs_read.py                 # 1 GB (50 plogs of 20 MB) in a temporary folder, deleted after; 3 runs
python bench/logs_read.py --mb 100 --repeat 1 --no-docs   # a quick check

The plogs are ordinary records (fixtures.logs.noise) of 50 processes, one of which ends with an AI Core
error of a named kernel; the row is written only when the report's first finding names that kernel.
Targets: under 30 s and under 1 GB peak RSS on 2 cores (NPU_TRIAGE_THREADS=2).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.doc_sections import write_marked_section  # noqa: E402
from bench.measure import measure, median_of  # noqa: E402
from bench.results import machine  # noqa: E402
from fixtures.logs.failures import aicore_error  # noqa: E402
from fixtures.logs.noise import noise_records  # noqa: E402
from fixtures.logs.records import file_stamp  # noqa: E402

START, END = "<!-- logs:start -->", "<!-- logs:end -->"
FILE_MB = 20  # a plog rotates at about this size
KERNEL = "MatMulV2_bench_fault_mix_aic"
TARGET_S, TARGET_RSS_MB = 30.0, 1000.0


def write_plogs(root: Path, total_mb: int) -> int:
    """total_mb of plogs under root/debug/plog (one chunk of records, each file with its own pid);
    the last file ends with the AI Core error. Returns the bytes written."""
    rng, t0 = random.Random(0), datetime(2024, 9, 12, 10, 0, 0)
    chunk = "".join(noise_records(rng, 99999, t0, 20000))
    repeat = max(1, FILE_MB * 10**6 // len(chunk))
    files = max(1, total_mb // FILE_MB)
    folder = root / "debug" / "plog"
    folder.mkdir(parents=True)
    written = 0
    for n in range(files):
        pid = 10000 + n
        text = chunk.replace("(99999,", f"({pid},") * repeat
        if n == files - 1:
            text += "".join(aicore_error(pid, t0 + timedelta(hours=1), 0, 7, 42, KERNEL))
        path = folder / f"plog-{pid}_{file_stamp(t0)}.log"
        path.write_text(text, encoding="utf-8")
        written += path.stat().st_size
    return written


def section(result: dict) -> str:
    m, r = result["machine"], result
    met = r["wall_s"] < TARGET_S and r["peak_rss_mb"] < TARGET_RSS_MB
    row = (
        f"| {r['input_mb']:.0f} | {r['records']:,} | {r['wall_s']:.2f} | {r['cpu_s']:.1f} | "
        f"{r['input_mb'] / r['wall_s']:.0f} | {r['peak_rss_mb']:.0f} | {'met' if met else 'not met'} |"
    )
    lines = [
        START,
        "",
        "",
        "## Logs: `npu-triage logs` over 1 GB of plogs",
        "",
        f"Measured {m.get('date')}, median of {r['repeat']} runs (largest peak RSS): {r['files']} plogs, "
        f"{r['input_mb']:.0f} MB, {r['records']:,} records (written by "
        "bench/logs_read.py: ordinary records of fixtures.logs.noise, one AI Core error at the end), "
        f"NPU_TRIAGE_THREADS=2; the report's first finding names the planted kernel: {r['kernel_found']}.",
        "",
        "| input MB | records | wall s | CPU s (user + system) | MB/s | peak RSS MB | targets: < 30 s, < 1,000 MB |",
        "|---:|---:|---:|---:|---:|---:|---|",
        row,
        "",
        f"Machine: {m.get('nproc')} cores, {m.get('memory_gb')} GB memory, {m.get('cpu')}, Python {m.get('python')}; "
        f"load average at the start {r['load']} (1 / 5 / 15 min; the machine is shared, so the wall time carries "
        "that contention, the CPU time less so). Regenerate: `python bench/logs_read.py`.",
        END,
    ]
    return "\n".join(lines)


def run(total_mb: int, repeat: int = 3) -> dict:
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="npu-triage-logs-bench-") as tmp:
        logs, out = Path(tmp) / "logs", Path(tmp) / "out"
        size = write_plogs(logs, total_mb)
        env = {**os.environ, "NPU_TRIAGE_THREADS": "2"}
        cmd = [sys.executable, "-m", "analyzer", "logs", str(logs), "--out", str(out), "--format", "json"]
        runs, cpus = [], []
        for _ in range(repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            runs.append(measure(cmd, Path(tmp) / "run.log", cwd=ROOT, env=env))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the launcher's, with the command it waited for
            cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        m, cpu_s = median_of(runs), sorted(cpus)[len(cpus) // 2]
        doc = json.loads((out / "logs" / "logs.json").read_text()) if m.exit_code == 0 else {}
    first = (doc.get("findings") or [{}])[0]
    return {
        "files": len(list(range(max(1, total_mb // FILE_MB)))),
        "input_mb": size / 1e6,
        "wall_s": m.wall_s,
        "peak_rss_mb": m.peak_rss_mb,
        "cpu_s": cpu_s,
        "exit_code": m.exit_code,
        "records": doc.get("summary", {}).get("records", 0),
        "kernel_found": first.get("subject") == KERNEL,
        "repeat": repeat,
        "machine": machine(),
        "load": load,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python bench/logs_read.py", description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=int, default=1000, help="MB of plogs to generate (default 1000)")
    p.add_argument("--no-docs", action="store_true", help="print the row, do not write docs/benchmark.md")
    p.add_argument(
        "--repeat", type=int, default=3, help="runs; the row holds the median wall and CPU time, the largest RSS"
    )
    args = p.parse_args(argv)
    result = run(args.mb, args.repeat)
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}))
    if result["exit_code"] != 0 or not result["kernel_found"]:
        print("the run failed or missed the planted kernel: row not written", file=sys.stderr)
        return 1
    if not args.no_docs:
        write_marked_section(ROOT / "docs" / "benchmark.md", section(result), START, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
