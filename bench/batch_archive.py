"""Benchmark and acceptance check of `npu-triage batch` on a generated archive of many runs.

Writes N generated runs (most as folders, some zipped, some in a .tgz, one corrupt zip) into a
temporary folder, then: (1) a first batch, timed; (2) the same command again, timed (it must
skip every known run); (3) a batch killed with SIGKILL after a few commits and rerun, whose
catalog must equal the uninterrupted one. Prints the numbers as JSON.

    python bench/batch_archive.py --runs 200 --jobs 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

import duckdb

from analyzer.rule_engine.loader import default_rules_dir
from analyzer.runs.catalog_schema import CATALOG_TABLES
from fixtures.generator import write_export


def write_archive(root: Path, runs: int) -> None:
    """runs - 1 good runs: 3/4 as folders, the rest split over zips and one .tgz; plus one corrupt zip."""
    staging = root.parent / "staging"
    packed = []
    for i in range(runs - 1):
        target = (root if i % 4 else staging) / f"batch{i // 50}" / f"run_{i:03d}"
        write_export("healthy", target, seed=i)
        if not i % 4:
            packed.append(target)
    for k in range(0, len(packed), 12):
        group = packed[k : k + 12]
        if k == 0:
            with tarfile.open(root / "group_000.tgz", "w:gz") as tf:
                for folder in group:
                    tf.add(folder, arcname=f"{folder.parent.name}/{folder.name}")
            continue
        with zipfile.ZipFile(root / f"group_{k:03d}.zip", "w", zipfile.ZIP_DEFLATED) as zf:
            for folder in group:
                for p in sorted(folder.rglob("*")):
                    zf.write(p, p.relative_to(staging).as_posix())
    (root / "corrupt.zip").write_bytes(b"PK\x03\x04 truncated archive")


def dump(catalog: Path) -> dict[str, list]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in CATALOG_TABLES}
    finally:
        con.close()


RULES: list[str] = []  # ["--rules", snapshot]: every batch of one benchmark judges with the same rules


def batch(root: Path, catalog: Path, jobs: int) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "analyzer", "batch", str(root), "--catalog", str(catalog), "--jobs", str(jobs), *RULES],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def killed_batch(root: Path, catalog: Path, jobs: int, after: int) -> int:
    cmd = [
        sys.executable,
        "-m",
        "analyzer",
        "batch",
        str(root),
        "--catalog",
        str(catalog),
        "--jobs",
        str(jobs),
        "--verbose",
        *RULES,
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    committed = 0
    for line in proc.stdout:
        committed += line.startswith("catalogued:")
        if committed == after:
            os.killpg(proc.pid, signal.SIGKILL)  # the batch and its workers, at once
            break
    proc.wait()
    return committed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--kill-after", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="npu-triage-bench-") as tmp:
        root = Path(tmp) / "archive"
        root.mkdir()
        shutil.copytree(default_rules_dir(), Path(tmp) / "rules")  # rules may change while the benchmark runs
        RULES[:] = ["--rules", str(Path(tmp) / "rules")]
        write_archive(root, args.runs)
        whole, killed = Path(tmp) / "whole.duckdb", Path(tmp) / "killed.duckdb"
        first = batch(root, whole, args.jobs)
        second = batch(root, whole, args.jobs)
        tables = dump(whole)
        committed = killed_batch(root, killed, args.jobs, args.kill_after)
        partial = len(dump(killed)["catalog_runs"])
        batch(root, killed, args.jobs)
        result = {
            "runs_written": args.runs,
            "jobs": args.jobs,
            "first_s": round(first, 2),
            "second_s": round(second, 2),
            "second_over_first": round(second / first, 3),
            "catalogued": len(tables["catalog_runs"]),
            "failures": [r[0] for r in tables["failures"]],
            "killed_after_commits": committed,
            "runs_in_killed_catalog": partial,
            "rerun_equals_uninterrupted": dump(killed) == tables,
        }
    print(json.dumps(result, indent=2))
    ok = (
        result["second_over_first"] < 0.10
        and result["rerun_equals_uninterrupted"]
        and result["catalogued"] == args.runs - 1
        and result["failures"] == ["corrupt.zip"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
