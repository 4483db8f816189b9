"""Benchmark row: `npu-triage accuracy` of one large tensor pair (a float16 native dump file against a float32 .npy).

python bench/accuracy_row.py                     # a 4 GB pair (1.43 GB dump + 2.86 GB reference), 2 rounds
python bench/accuracy_row.py --elements 50000000 --no-docs   # a quick check

The pair is generated in chunks into reports/bench/accuracy/ (kept for the next run). Each round runs the
command alone, with 2 threads; wall time, CPU time and peak RSS (sampled every 100 ms over the process tree)
are taken by bench/executor_row.py's measure_tree. Throughput is the bytes of both files over the command's
whole wall time (start-up, rules and reports included). The section of docs/benchmark.md between the
accuracy markers is rewritten.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import struct
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from analyzer.accuracy.read.header_proto import DumpData  # noqa: E402
from bench.doc_sections import write_marked_section  # noqa: E402
from bench.executor_row import TreeMeasurement, measure_tree  # noqa: E402
from bench.measure import median  # noqa: E402

START, END = "<!-- accuracy:start -->", "<!-- accuracy:end -->"
CHUNK = 1 << 24
OP = "MatMul.bench_matmul.1.2.1735689600000000"


def write_pair(folder: Path, elements: int, seed: int = 0) -> tuple[Path, Path]:
    """dump/{OP} (float16, ND) and reference/{OP}.output.0.npy (float32), written chunk by chunk."""
    dump, ref = folder / "dump", folder / "reference"
    dump.mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)
    header = DumpData(version="2.0", op_name="bench_matmul")
    entry = header.output.add(data_type=2, format=2, size=elements * 2)
    entry.shape.dim.extend([elements])
    head = header.SerializeToString()
    target = np.lib.format.open_memmap(ref / f"{OP}.output.0.npy", "w+", np.float32, (elements,))
    rng = np.random.default_rng(seed)
    with (dump / OP).open("wb") as fh:
        fh.write(struct.pack("<Q", len(head)) + head)
        for start in range(0, elements, CHUNK):
            y = rng.standard_normal(min(CHUNK, elements - start), dtype=np.float32)
            target[start : start + y.size] = y
            fh.write(y.astype(np.float16).tobytes())
    target.flush()
    del target
    return dump, ref


def compare_only(dump: Path, ref: Path, threads: int) -> tuple[float, float]:
    """(wall s, CPU s) of the comparison alone (analyzer.accuracy.compare.compare_pairs), in this process and
    the worker processes it starts."""
    from analyzer.accuracy.compare import compare_pairs
    from analyzer.accuracy.pairing import pair_tensors
    from analyzer.accuracy.read.folder import read_folder

    pairs, _ = pair_tensors(read_folder(dump).tensors, read_folder(ref).tensors)
    wall, cpu = time.perf_counter(), _cpu_with_workers()
    compare_pairs(pairs, threads)
    return time.perf_counter() - wall, _cpu_with_workers() - cpu


def _cpu_with_workers() -> float:
    """User + system CPU seconds of this process and of its ended child processes (compare's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def section(samples: list[TreeMeasurement], alone, dump_bytes: int, ref_bytes: int, elements: int, load) -> str:
    wall = median([s.wall_s for s in samples])
    total = dump_bytes + ref_bytes
    alone_wall = median([w for w, _ in alone])
    alone_cpu = median([c for _, c in alone])
    lines = [
        START,
        "## Accuracy: one large tensor pair",
        "",
        f"`npu-triage accuracy DUMP REFERENCE --format json` over one float16 native dump file of {elements:,} "
        f"elements ({dump_bytes / 1e9:.2f} GB) against its float32 .npy reference ({ref_bytes / 1e9:.2f} GB), "
        f"2 threads (NPU_TRIAGE_THREADS=2); median of {len(samples)} run(s), the files in the page cache "
        "(written just before). Throughput counts the bytes of both files over the whole command.",
        "",
        "| pair GB | wall s | GB/s (both files) | GB/s (dump file) | CPU s | peak RSS MB |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| {total / 1e9:.2f} | {wall:.2f} | {total / 1e9 / wall:.2f} | {dump_bytes / 1e9 / wall:.2f} | "
        f"{median([s.cpu_s for s in samples]):.1f} | {max(s.peak_tree_rss_mb for s in samples):.0f} |",
        "",
        f"The comparison alone (`compare_pairs` with 2 workers: a thread of this process and a worker process; no "
        "start-up, rules or reports): "
        f"{alone_wall:.2f} s wall, {total / 1e9 / alone_wall:.2f} GB/s of both files, "
        f"{dump_bytes / 1e9 / alone_wall:.2f} GB/s of the dump file; {alone_cpu:.1f} CPU s (user + system of "
        f"its threads and worker processes), that is {alone_cpu / (dump_bytes / 1e9):.2f} CPU s per GB of the "
        f"dump file (its float32 reference read alongside), {total / 1e9 / alone_cpu:.2f} GB/s of both files per "
        f"CPU second: {2 * dump_bytes / 1e9 / alone_cpu:.2f} GB/s of the dump file on 2 free cores (what the wall time "
        "shows when no other work shares them).",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; load average "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} over 1 / 5 / 15 min at the start (a machine shared with "
        "other work).",
        "",
        "Regenerate: `python bench/accuracy_row.py`.",
        END,
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python bench/accuracy_row.py", description=__doc__.splitlines()[0])
    p.add_argument("--elements", type=int, default=715_827_882, help="elements of the tensor (default: a 4 GB pair)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--no-docs", action="store_true", help="print the row, do not write docs/benchmark.md")
    a = p.parse_args(argv)
    folder = ROOT / "reports" / "bench" / "accuracy" / str(a.elements)
    dump, ref = folder / "dump", folder / "reference"
    if not (dump / OP).is_file():
        dump, ref = write_pair(folder, a.elements)
    os.environ["NPU_TRIAGE_THREADS"] = "2"
    out = folder / "out"
    cmd = [sys.executable, "-m", "analyzer", "accuracy", str(dump), str(ref), "--format", "json", "--out", str(out)]
    load = os.getloadavg()
    samples = [measure_tree(cmd, folder / f"round{n}.log") for n in range(a.rounds)]
    if any(s.exit_code != 0 for s in samples):
        print((folder / "round0.log").read_text(), file=sys.stderr)
        return 1
    doc = json.loads((folder / "out" / "dump" / "accuracy.json").read_text())
    assert doc["counts"]["compared"] == 1, doc["counts"]
    alone = [compare_only(dump, ref, 2) for _ in range(a.rounds)]
    text = section(samples, alone, (dump / OP).stat().st_size, next(ref.iterdir()).stat().st_size, a.elements, load)
    print(text)
    if not a.no_docs:
        write_marked_section(ROOT / "docs" / "benchmark.md", text, START, END)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
