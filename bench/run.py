"""Benchmark npu-triage diagnose against the DuckDB parse floor and msprof-analyze on big exports.

python bench/run.py                    # full run: generate (cached), measure, print, write JSON
python bench/run.py --tiny --skip-msprof-analyze   # seconds-long check of every step (CI)
python bench/run.py --update-readme    # rewrite the README's benchmark section from the JSON
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import msprof_analyze  # noqa: E402
from bench.inputs import BenchInput, bench_inputs  # noqa: E402
from bench.measure import Measurement, measure  # noqa: E402
from bench.render import print_results, update_readme  # noqa: E402
from bench.results import (  # noqa: E402
    DIAGNOSE,
    DIAGNOSE_HTML,
    FLOOR,
    MSPROF,
    Row,
    results_document,
    write_json_atomically,
)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python bench/run.py", description=__doc__.splitlines()[0])
    p.add_argument(
        "--tiny", action="store_true", help="tiny inputs: a seconds-long run of every step (CI)"
    )
    p.add_argument(
        "--sizes", default="1x,5x,10x", help="comma-separated size names: 1x, 5x, 10x (msprof only)"
    )
    p.add_argument("--skip-msprof-analyze", action="store_true", help="do not run msprof-analyze")
    p.add_argument(
        "--with-msprof-analyze",
        action="store_true",
        help="with --tiny: run msprof-analyze even when its venv must be installed first",
    )
    p.add_argument("--out", type=Path, default=ROOT / "reports" / "bench", help="results folder")
    p.add_argument("--data", type=Path, help="cache of generated inputs (default: OUT/data)")
    p.add_argument(
        "--venv", type=Path, help="msprof-analyze venv (default: reports/bench/msprof-venv)"
    )
    p.add_argument(
        "--update-readme",
        action="store_true",
        help="rewrite README.md's section from OUT/results.json",
    )
    return p.parse_args(argv)


def _row(item: BenchInput, tool: str, m: Measurement) -> Row:
    return Row(
        input=item.label,
        layout=item.layout,
        size=item.size,
        tasks=item.tasks,
        largest_file_mb=round(item.largest_file_mb(), 1),
        input_mb=round(item.total_mb(), 1),
        tool=tool,
        wall_s=round(m.wall_s, 3),
        peak_rss_mb=round(m.peak_rss_mb, 1),
        exit_code=m.exit_code,
    )


def _engine_rows(item: BenchInput, work: Path) -> list[Row]:
    rows = []
    for tool, formats in ((DIAGNOSE, "json,md"), (DIAGNOSE_HTML, "json,md,html")):
        tag = formats.replace(",", "_")
        cmd = [
            sys.executable,
            "-m",
            "analyzer",
            "diagnose",
            str(item.path),
            "--out",
            str(work / tag),
            "--format",
            formats,
        ]
        rows.append(_row(item, tool, measure(cmd, work / f"diagnose_{tag}.log", cwd=ROOT)))
    floor = [
        sys.executable,
        str(ROOT / "bench" / "parse_floor.py"),
        *[arg for group in item.csv_groups() for arg in ("--csv", *map(str, group))],
        "--json",
        *map(str, item.json_files()),
    ]
    rows.append(_row(item, FLOOR, measure(floor, work / "parse_floor.log", cwd=ROOT)))
    return rows


def _msprof_row(item: BenchInput, tool: Path, work: Path) -> Row:
    before = msprof_analyze.tree_digest(item.path)
    log = work / "msprof_analyze.log"
    m = measure(
        msprof_analyze.advisor_command(tool, item.export_folder(), work / "msprof-analyze"), log, cwd=work
    )
    msprof_analyze.check_full_analysis(log)
    if msprof_analyze.tree_digest(item.path) != before:
        raise SystemExit(
            f"msprof-analyze wrote inside its input {item.path}; "
            "delete that folder (it is regenerated) and run it on a copy"
        )
    return _row(item, MSPROF, m)


def _msprof_tool(args: argparse.Namespace) -> Path | None:
    venv = args.venv or ROOT / "reports" / "bench" / "msprof-venv"
    if args.skip_msprof_analyze:
        return None
    if args.tiny and not args.with_msprof_analyze and not msprof_analyze.venv_tool(venv).exists():
        return None
    return msprof_analyze.ensure_venv(venv)


def run_benchmark(args: argparse.Namespace) -> dict:
    start = time.perf_counter()
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    items = bench_inputs(args.data or args.out / "data", sizes, args.tiny)
    tool = _msprof_tool(args)
    rows: list[Row] = []
    for item in items:
        work = args.out / "runs" / item.path.name
        print(f"measuring {item.label} ...", file=sys.stderr, flush=True)
        rows += _engine_rows(item, work)
        if tool is not None and item.layout == "torch_npu":
            rows.append(_msprof_row(item, tool, work))
    doc = results_document(rows, args.tiny, time.perf_counter() - start)
    doc["sizes"] = sizes
    write_json_atomically(args.out / "results.json", doc)
    return doc


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    if args.update_readme:
        doc = json.loads((args.out / "results.json").read_text(encoding="utf-8"))
        update_readme(ROOT / "README.md", doc)
        print(f"README.md benchmark section rewritten from {args.out / 'results.json'}")
        return 0
    doc = run_benchmark(args)
    print_results(doc)
    print(f"wrote {args.out / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
