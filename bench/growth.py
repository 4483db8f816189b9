"""Growth benchmark: npu-triage's cost as each input axis grows (kernels, gaps, runs, ranks), and its log-log slope.

python bench/growth.py                                   # every axis at issue 44's sizes (hours)
python bench/growth.py --axes ranks,runs --max ranks=256,runs=200 --baseline /work/wt-base
python bench/growth.py --quick                           # a minute-long check of every step
python bench/growth.py --from-json                       # rewrite docs/benchmark.md's section from the JSON

Inputs are generated once per axis and size under OUT/data and reused. Per size, npu-triage (and
the baseline checkout's, with --baseline), the parse floor of every file of the input and, for
jobs, msprof-analyze run one after the other, round by round. Results: OUT/growth_results.json and
docs/benchmark.md's "Growth" section (not with --quick or --no-docs).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import msprof_analyze  # noqa: E402
from bench.batch_archive import same_catalogs  # noqa: E402
from bench.growth_commands import BASE, NPU, Command, clean_up, commands, compile_baseline, fresh  # noqa: E402
from bench.growth_inputs import GrowthInput, gaps_input, kernels_input, ranks_input, runs_input  # noqa: E402
from bench.growth_render import print_results, write_docs  # noqa: E402
from bench.growth_results import AXES  # noqa: E402
from bench.measure import Measurement, measure, median_of  # noqa: E402
from bench.results import machine, write_json_atomically  # noqa: E402
from bench.run import _commit, _compile_engine  # noqa: E402

_SERIES = [10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000]
FULL_SIZES = {
    "kernels": _SERIES,
    "gaps": _SERIES,
    "runs": [10, 20, 50, 100, 200, 500, 1000, 2000],
    "ranks": [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096],
}
QUICK_SIZES = {"kernels": [2_000, 4_000, 8_000], "gaps": [2_000, 4_000, 8_000], "runs": [4, 8, 16], "ranks": [4, 8, 16]}
MSPROF_VENV = Path("/work/msprof-venv")


def _size(text: str) -> int:
    """``200k``, ``1M`` or a plain count."""
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def _limits(text: str) -> dict[str, int]:
    """``ranks=256,runs=200`` -> the largest size per axis."""
    limits = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        axis, _, value = part.partition("=")
        if axis not in AXES or not value:
            raise SystemExit(f"--max {part!r}: expected AXIS=SIZE with AXIS one of {', '.join(AXES)}")
        limits[axis] = _size(value)
    return limits


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python bench/growth.py", description=__doc__.splitlines()[0])
    p.add_argument("--axes", default=",".join(AXES), help=f"comma-separated subset of {', '.join(AXES)}")
    p.add_argument("--max", default="", help="largest size per axis, e.g. ranks=256,runs=200,kernels=200k")
    p.add_argument("--quick", action="store_true", help="three small sizes per axis, no docs (a check of every step)")
    p.add_argument("--repeat", type=int, default=1, help="runs of every command per size (median wall time)")
    p.add_argument("--layout", default="msprof", choices=("msprof", "torch_npu"), help="layout of kernels/gaps runs")
    p.add_argument("--baseline", type=Path, help="another checkout of npu-triage measured side by side (read only)")
    p.add_argument("--skip-msprof-analyze", action="store_true")
    p.add_argument("--msprof-venv", type=Path, help=f"msprof-analyze's venv (default {MSPROF_VENV} if present)")
    p.add_argument("--out", type=Path, default=ROOT / "reports" / "bench-growth")
    p.add_argument("--data", type=Path, help="cache of generated inputs (default: OUT/data)")
    p.add_argument("--note", default="", help="a sentence recorded with the run in docs/benchmark.md")
    p.add_argument("--no-docs", action="store_true", help="do not write docs/benchmark.md")
    p.add_argument(
        "--from-json",
        action="store_true",
        help="rewrite the docs section from OUT/growth_results.json (with --note: that note, not the run's)",
    )
    p.add_argument("--generate-only", action="store_true", help="write the inputs into the cache, measure nothing")
    args = p.parse_args(argv)
    args.out = args.out.resolve()
    args.data = (args.data or args.out / "data").resolve()
    args.baseline = args.baseline and args.baseline.resolve()
    if args.baseline and not (args.baseline / "analyzer").is_dir():
        raise SystemExit(f"--baseline {args.baseline}: no npu-triage checkout there (no analyzer/ folder)")
    args.axes = [a.strip() for a in args.axes.split(",") if a.strip()]
    if unknown := [a for a in args.axes if a not in AXES]:
        raise SystemExit(f"--axes: unknown {', '.join(unknown)}; known: {', '.join(AXES)}")
    if args.repeat < 1:
        raise SystemExit("--repeat must be at least 1")
    args.max = _limits(args.max)
    return args


def results_path(args: argparse.Namespace) -> Path:
    """Where the results go; a --quick check keeps the real run's."""
    return args.out / ("growth_results_quick.json" if args.quick else "growth_results.json")


def plan(args: argparse.Namespace) -> dict[str, list[int]]:
    """Axis -> the sizes to measure."""
    table = QUICK_SIZES if args.quick else FULL_SIZES
    return {a: [s for s in table[a] if s <= args.max.get(a, s)] for a in args.axes}


def growth_input(args: argparse.Namespace, axis: str, size: int) -> GrowthInput:
    data = args.data
    if axis == "kernels":
        return kernels_input(data, size, args.layout)
    if axis == "gaps":
        return gaps_input(data, size, args.layout)
    return runs_input(data, size) if axis == "runs" else ranks_input(data, size)


def _msprof_tool(args: argparse.Namespace) -> Path | None:
    if args.skip_msprof_analyze or "ranks" not in args.axes:
        return None
    venv = args.msprof_venv or (MSPROF_VENV if msprof_analyze.venv_tool(MSPROF_VENV).exists() else None)
    return msprof_analyze.ensure_venv(venv or ROOT / "reports" / "bench" / "msprof-venv")


def _input_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def read_once(root: Path) -> None:
    """Read every file under ``root`` once, so the first command measured does not pay alone for reading
    the input from disk (the tools run in a fixed order, npu-triage first)."""
    for path in sorted(root.rglob("*")):
        if path.is_file():
            with path.open("rb") as file:
                while file.read(1 << 20):
                    pass


def measure_input(
    item: GrowthInput, cmds: dict[str, Command], repeat: int, trash: Path
) -> dict[str, list[Measurement]]:
    """Every command ``repeat`` times, round by round, each round into a new folder, on an input read once
    before; none may write inside it."""
    before = msprof_analyze.tree_digest(item.path)
    read_once(item.path)
    samples: dict[str, list[Measurement]] = {tool: [] for tool in cmds}
    for run in range(1, repeat + 1):
        for tool, cmd in cmds.items():
            out = fresh(cmd, run, trash)
            log = cmd.output.parent / f"{cmd.output.name}_{run}.log"
            samples[tool].append(measure(cmd.argv_for(out), log, cwd=cmd.cwd, env=cmd.env))
    if msprof_analyze.tree_digest(item.path) != before:
        raise SystemExit(f"a command wrote inside its input {item.path}")
    return samples


def _row(item: GrowthInput, tool: str, samples: list[Measurement], input_mb: float) -> dict:
    m = median_of(samples)
    return {
        "axis": item.axis,
        "size": item.size,
        "input_mb": round(input_mb, 1),
        "tool": tool,
        "wall_s": round(m.wall_s, 3),
        "peak_rss_mb": round(m.peak_rss_mb, 1),
        "cpu_s": round(m.cpu_s, 3),
        "cpu_pct": round(100 * m.cpu_s / m.wall_s, 1) if m.wall_s > 0 else 0.0,
        "exit_code": m.exit_code,
        "wall_s_runs": [round(x.wall_s, 3) for x in samples],
    }


def _same_catalog(cmds: dict[str, Command]) -> bool | None:
    """A batch's catalog against the baseline's, table by table (None without a baseline)."""
    if BASE not in cmds:
        return None
    ours, theirs = (cmds[t].round_output(1) / "catalog.duckdb" for t in (NPU, BASE))
    return ours.exists() and theirs.exists() and all(same_catalogs(theirs, ours).values())


def input_rows(args: argparse.Namespace, item: GrowthInput, cmds: dict[str, Command]) -> list[dict]:
    samples = measure_input(item, cmds, args.repeat, args.out / "trash")
    size_mb = _input_mb(item.path)
    rows = [_row(item, tool, ms, size_mb) for tool, ms in samples.items()]
    if item.axis == "runs":
        same = _same_catalog(cmds)
        rows = [{**r, "same_catalog": same} if r["tool"] == NPU else r for r in rows]
    return rows


def run(args: argparse.Namespace, argv: list[str]) -> dict:
    """Measure every axis and size asked for; the results file is rewritten after each input, so a
    run stopped halfway keeps what it measured."""
    start = time.perf_counter()
    _compile_engine()
    if args.baseline:
        compile_baseline(args.baseline, args.out / "pycache-baseline")
    args.commit, load, msprof, rows = _commit(), os.getloadavg(), _msprof_tool(args), []
    measured: list[dict[str, Command]] = []
    for axis, sizes in plan(args).items():
        for size in sizes:
            item = growth_input(args, axis, size)
            print(f"measuring {axis} {size:,} ...", file=sys.stderr, flush=True)
            work = args.out / "runs" / f"{item.axis}-{item.size}"
            measured.append(commands(item, work, args.baseline, msprof, args.out / "pycache-baseline"))
            rows += input_rows(args, item, measured[-1])
            doc = _document(args, argv, rows, load, time.perf_counter() - start)
            write_json_atomically(results_path(args), doc)
    for cmds in measured:  # after the last measurement: deleting files slows the next runs' file creation
        clean_up(cmds, args.repeat, args.out / "trash")
    return _document(args, argv, rows, load, time.perf_counter() - start)


def _document(args: argparse.Namespace, argv: list[str], rows: list[dict], load: tuple, total_s: float) -> dict:
    return {
        "machine": machine(),
        "commit": args.commit,  # as the run began
        "baseline": _baseline_name(args.baseline),
        "load_average": list(load),
        "repeats": args.repeat,
        "quick": args.quick,
        "note": args.note,
        "command": shlex.join(["python", "bench/growth.py", *_without_note(argv)]),
        "total_run_s": round(total_s, 1),
        "rows": rows,
    }


def _without_note(argv: list[str]) -> list[str]:
    """The command line to show: the note is printed on its own."""
    note = {i for i, a in enumerate(argv) if a == "--note"}
    return [a for i, a in enumerate(argv) if i not in note and i - 1 not in note and not a.startswith("--note=")]


def _baseline_name(base: Path | None) -> str | None:
    if base is None:
        return None
    done = subprocess.run(["git", "-C", str(base), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return f"{base} at commit {done.stdout.strip() or 'unknown'}"


def rewrite_from_json(results: Path, docs: Path, note: str) -> None:
    """``docs``' Growth section from a run's ``results``; a ``note`` (not empty) replaces the one recorded with the
    run, in the results too, so that the two say the same."""
    doc = json.loads(results.read_text(encoding="utf-8"))
    if note:
        doc["note"] = note
        write_json_atomically(results, doc)
    write_docs(docs, doc)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = _parse(argv)
    results, docs = results_path(args), ROOT / "docs" / "benchmark.md"
    if args.generate_only:
        for axis, sizes in plan(args).items():
            print(*(growth_input(args, axis, size).path for size in sizes), sep="\n")
        return 0
    if args.from_json:
        rewrite_from_json(results, docs, args.note)
        print(f"docs/benchmark.md's Growth section rewritten from {results}")
        return 0
    doc = run(args, argv)
    write_json_atomically(results, doc)
    print_results(doc)
    print(f"wrote {results}")
    if not (args.quick or args.no_docs):
        write_docs(docs, doc)
        print("wrote docs/benchmark.md's Growth section")
    return 0


if __name__ == "__main__":
    sys.exit(main())
