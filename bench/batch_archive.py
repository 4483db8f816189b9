"""Benchmark and acceptance check of `npu-triage batch` on a generated archive of many runs.

Writes N generated runs (most as folders, some zipped, some in a .tgz, one corrupt zip) into a
temporary folder, then: (1) a first batch, timed; (2) the same command again, timed (it must
skip every known run); (3) a batch killed with SIGKILL after a few commits and rerun, whose
catalog must equal the uninterrupted one. Prints the numbers as JSON.

    python bench/batch_archive.py --runs 200 --jobs 2
    python bench/batch_archive.py --executor-row --runs 200 --workers 2   # only the local pool vs Dask row

The executor row (bench/executor_row.py) needs the dask extra and writes its section of
docs/benchmark.md.
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

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from analyzer.rule_engine.loader import default_rules_dir  # noqa: E402
from analyzer.runs.catalog_schema import CATALOG_TABLES  # noqa: E402
from bench.executor_row import batch_command, measure_tree, section, write_section  # noqa: E402
from fixtures.generator import write_export  # noqa: E402


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


def dump(catalog: Path, columns: dict[str, list[str]] | None = None) -> dict[str, list]:
    """Every catalog table's rows, sorted; of ``columns`` (per table) only, when given."""
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return {
            t: con.execute(f"SELECT {_select(columns, t)} FROM {t} ORDER BY ALL").fetchall() for t in CATALOG_TABLES
        }
    finally:
        con.close()


def _select(columns: dict[str, list[str]] | None, table: str) -> str:
    return "*" if columns is None else ", ".join(f'"{c}"' for c in columns[table])


def _columns(catalog: Path) -> dict[str, list[str]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        found = con.execute(
            "SELECT table_name, list(column_name ORDER BY column_index) FROM duckdb_columns() "
            "WHERE schema_name = 'main' AND NOT internal GROUP BY table_name"
        ).fetchall()
    finally:
        con.close()
    return {t: list(cs) for t, cs in found}


def same_catalogs(base: Path, new: Path) -> dict[str, bool]:
    """Per table, whether ``new``'s rows equal ``base``'s over the columns both have, every column only ``new``
    has (a later catalog format's) being NULL and none of ``base``'s missing: a newer format holds the same
    catalog."""
    theirs, ours = _columns(base), _columns(new)
    shared = {t: [c for c in ours.get(t, []) if c in theirs.get(t, [])] for t in CATALOG_TABLES}
    extra = {t: [c for c in ours.get(t, []) if c not in theirs.get(t, [])] for t in CATALOG_TABLES}
    a, b = dump(base, shared), dump(new, shared)
    con = duckdb.connect(str(new), read_only=True)
    try:
        null = {
            t: not extra[t]
            or not con.execute(
                f"SELECT count(*) FROM {t} WHERE " + " OR ".join(f'"{c}" IS NOT NULL' for c in extra[t])
            ).fetchall()[0][0]
            for t in CATALOG_TABLES
        }
    finally:
        con.close()
    kept = {t: set(theirs.get(t, [])) <= set(ours.get(t, [])) for t in CATALOG_TABLES}
    return {t: a[t] == b[t] and null[t] and kept[t] for t in CATALOG_TABLES}


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


def executor_row(runs: int, workers: int, repeat: int, doc: Path) -> int:
    """Local pool against Dask on one archive, interleaved; write the row when the catalogs are equal."""
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="npu-triage-bench-") as tmp:
        root = Path(tmp) / "archive"
        root.mkdir()
        shutil.copytree(default_rules_dir(), Path(tmp) / "rules")
        rules = ["--rules", str(Path(tmp) / "rules")]
        write_archive(root, runs)
        rows: dict[str, list] = {"local pool": [], "dask": []}
        catalogs = {}
        for i in range(repeat):
            for name, executor in (("local pool", "local"), ("dask", "dask")):
                catalogs[name] = Path(tmp) / f"{executor}-{i}.duckdb"
                cmd = batch_command(root, catalogs[name], executor, workers, rules)
                m = measure_tree(cmd, Path(tmp) / f"{executor}-{i}.log")
                print(f"{name}: {m}", flush=True)
                if m.exit_code != 0:
                    print((Path(tmp) / f"{executor}-{i}.log").read_text(), file=sys.stderr)
                    return 1
                rows[name].append(m)
        if dump(catalogs["local pool"]) != dump(catalogs["dask"]):
            print("the catalogs of the two executors differ: row not written", file=sys.stderr)
            return 1
    text = section(rows, runs, workers, load)
    print(text)
    write_section(doc, text)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--kill-after", type=int, default=20)
    parser.add_argument("--executor-row", action="store_true", help="only the local pool vs Dask row")
    parser.add_argument("--workers", type=int, default=2, help="workers of each executor in the executor row")
    parser.add_argument("--repeat", type=int, default=1, help="interleaved runs of each executor (executor row)")
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "benchmark.md", help="where the row goes")
    args = parser.parse_args()
    if args.executor_row:
        return executor_row(args.runs, args.workers, args.repeat, args.doc)
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
