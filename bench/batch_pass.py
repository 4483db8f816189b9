"""A batch of many small distinct runs (several scenarios, both layouts), by two checkouts side by side.

Writes the runs, batches them with this checkout and with ``--base`` (another checkout of the
project, e.g. main's), checks that every catalog table is equal, and prints the wall time, CPU
seconds and peak RSS of each batch's process tree with the DuckDB parse floor of all the runs'
files (``parse_floor.py``) as JSON:

    python bench/batch_pass.py --base ../wt-base --runs 200 --jobs 2 --out reports/batch_pass
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.batch_archive import dump, same_catalogs  # noqa: E402
from bench.executor_row import measure_tree  # noqa: E402
from fixtures.generator import LAYOUTS, write_export  # noqa: E402

SCENARIOS = (
    "healthy",
    "host_sync_low_util",
    "mte_bound_conv",
    "gappy_multistream",
    "comm_not_overlapped",
    "batch_sweep",
    "call_count_hotspot",
)


def write_runs(root: Path, runs: int, db_every: int = 0) -> None:
    """``runs`` folders, each a scenario's exports with its own seed, scenarios and layouts taking turns;
    with ``db_every`` N, every N-th is a database export."""
    for i in range(runs):
        scenario, layout = SCENARIOS[i % len(SCENARIOS)], LAYOUTS[(i // len(SCENARIOS)) % 2]
        kind = "db" if db_every and i % db_every == db_every - 1 else "text"
        write_export(scenario, root / f"r{i:03d}_{scenario}_{layout}_{kind}", layout=layout, export_type=kind, seed=i)


def floor_command(root: Path) -> list[str]:
    """parse_floor.py over every per-task CSV (kernel_details / op_summary, task_time) and timeline JSON."""
    groups = [sorted(root.rglob("kernel_details.csv")) + sorted(root.rglob("op_summary_*.csv"))]
    groups.append(sorted(root.rglob("task_time_*.csv")))
    jsons = sorted(root.rglob("trace_view.json")) + sorted(root.rglob("msprof_*.json"))
    csv_args = [arg for group in groups if group for arg in ("--csv", *map(str, group))]
    return [sys.executable, str(ROOT / "bench" / "parse_floor.py"), *csv_args, "--json", *map(str, jsons)]


def batch_command(root: Path, catalog: Path, jobs: int, executor: str) -> list[str]:
    """The batch, run in the checkout and with it on PYTHONPATH (which every worker process inherits)."""
    return [
        "nice", "-n", "10", sys.executable, "-m", "analyzer",
        "batch", str(root), "--catalog", str(catalog), "--jobs", str(jobs), "--executor", executor,
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", type=Path, required=True, help="the checkout to compare with")
    p.add_argument("--other", type=Path, action="append", default=[], help="one more checkout to measure")
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--db-every", type=int, default=0, help="every N-th run a database export (0: none)")
    p.add_argument("--executor", default="local", choices=("local", "dask"))
    p.add_argument("--out", type=Path, required=True, help="a new folder for the runs, catalogs and logs")
    args = p.parse_args(argv)
    runs = args.out / "runs"
    if not runs.exists():
        write_runs(runs, args.runs, args.db_every)
    result = {"runs": args.runs, "jobs": args.jobs, "executor": args.executor, "load": os.getloadavg()}
    start = time.perf_counter()
    subprocess.run(["nice", "-n", "10", *floor_command(runs)], check=True, capture_output=True)
    result["parse_floor_s"] = round(time.perf_counter() - start, 2)
    catalogs = {}
    others = [(f"other{i}", path.resolve()) for i, path in enumerate(args.other)]
    for name, checkout in (("base", args.base.resolve()), ("new", ROOT), *others):
        catalogs[name] = args.out / f"{name}-{args.executor}.duckdb"
        catalogs[name].unlink(missing_ok=True)
        os.environ["PYTHONPATH"] = str(checkout)
        cmd = batch_command(runs, catalogs[name], args.jobs, args.executor)
        m = measure_tree(cmd, args.out / f"{name}-{args.executor}.log", cwd=checkout)
        ratio = round(m.wall_s / result["parse_floor_s"], 2)
        result[name] = {"wall_s": round(m.wall_s, 2), "cpu_s": round(m.cpu_s, 2), "ratio_to_floor": ratio}
        result[name] |= {"peak_rss_mb": round(m.peak_tree_rss_mb), "exit_code": m.exit_code}
    base = catalogs.pop("base")
    result["rows"] = {t: len(rows) for t, rows in dump(base).items()}
    for name, catalog in catalogs.items():
        same = same_catalogs(base, catalog)
        result[name]["catalog_equal"] = all(same.values())
        result[name]["tables_differing"] = [t for t, equal in same.items() if not equal]
    print(json.dumps(result, indent=1))
    return 0 if all(result[name]["catalog_equal"] for name in catalogs) else 1


if __name__ == "__main__":
    sys.exit(main())
