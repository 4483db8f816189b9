"""Benchmark npu-triage diagnose against the DuckDB parse floor and msprof-analyze on big exports.

python bench/run.py                    # full run: generate (cached), measure, print, write JSON and docs
python bench/run.py --tiny --skip-msprof-analyze   # seconds-long check of every step (CI)
python bench/run.py --sizes 1x --export DIR --skip-msprof-analyze   # a subset, plus an export of your own
python bench/run.py --sizes host-gaps --layouts msprof --skip-msprof-analyze   # one input: the gaps' causes
python bench/run.py --from-json        # rewrite docs/benchmark.md's section of the last run from its JSON

A full run adds its tables (machine, commit, every row, the targets) to docs/benchmark.md.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import msprof_analyze  # noqa: E402
from bench.inputs import BenchInput, bench_inputs, own_input  # noqa: E402
from bench.measure import Measurement, measure, median_of  # noqa: E402
from bench.render import print_results, update_docs  # noqa: E402
from bench.results import (  # noqa: E402
    DIAGNOSE,
    DIAGNOSE_HTML,
    DIAGNOSE_LIMITED,
    FLOOR,
    LIMIT,
    MSPROF,
    MSPROF_BUDGET_S,
    Row,
    recomputed_document,
    results_document,
    write_json_atomically,
)


def _absolute(text: str) -> Path:
    return Path(text).resolve()


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python bench/run.py", description=__doc__.splitlines()[0])
    p.add_argument("--tiny", action="store_true", help="tiny inputs: a seconds-long run of every step (CI)")
    p.add_argument(
        "--sizes",
        default="1x,5x,10x,host-gaps",
        help="comma-separated size names: 1x, 5x, 10x (msprof only), host-gaps (msprof only: 200,000 tasks, "
        "a host synchronize inside the gap before each)",
    )
    p.add_argument("--layouts", default="torch_npu,msprof", help="comma-separated layouts of generated inputs")
    p.add_argument(
        "--export",
        type=_absolute,
        action="append",
        default=[],
        help="an export folder of your own to measure too (repeatable); with --sizes '' only these",
    )
    p.add_argument(
        "--tools",
        default=",".join(_TOOL_NAMES),
        help=f"comma-separated subset of {', '.join(_TOOL_NAMES)} (msprof-analyze: see --skip-msprof-analyze)",
    )
    p.add_argument("--note", default="", help="a sentence recorded with the run in docs/benchmark.md")
    p.add_argument("--no-docs", action="store_true", help="do not write docs/benchmark.md")
    p.add_argument("--skip-msprof-analyze", action="store_true", help="do not run msprof-analyze")
    p.add_argument(
        "--repeat",
        type=int,
        help="runs of every tool per input, interleaved round by round, the median reported "
        "(default 3, 1 with --tiny); msprof-analyze stops once its runs of an input have taken "
        f"{MSPROF_BUDGET_S / 60:.0f} minutes",
    )
    p.add_argument(
        "--with-msprof-analyze",
        action="store_true",
        help="with --tiny: run msprof-analyze even when its venv must be installed first",
    )
    # Absolute paths: the tools run in other folders (npu-triage in the clone, msprof-analyze in
    # its work folder).
    p.add_argument("--out", type=_absolute, default=ROOT / "reports" / "bench", help="results folder")
    p.add_argument("--data", type=_absolute, help="cache of generated inputs (default: OUT/data)")
    p.add_argument("--venv", type=_absolute, help="msprof-analyze venv (default: reports/bench/msprof-venv)")
    p.add_argument(
        "--from-json",
        action="store_true",
        help="rewrite docs/benchmark.md's section of OUT/results.json's run (ratios and targets derived again)",
    )
    return p.parse_args(argv)


def _row(item: BenchInput, tool: str, samples: list[Measurement]) -> Row:
    """The table row of a tool's runs of an input: their median (``median_of``), each wall time."""
    m = median_of(samples)
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
        wall_s_runs=[round(x.wall_s, 3) for x in samples],
    )


Command = tuple[list[str], str, dict[str, str] | None]


_TOOL_NAMES = {"diagnose": DIAGNOSE, "html": DIAGNOSE_HTML, "limited": DIAGNOSE_LIMITED, "floor": FLOOR}


def _engine_commands(item: BenchInput, work: Path, tools: list[str]) -> dict[str, Command]:
    """Tool -> (command, log name, environment) for the ``tools`` asked for: npu-triage without and
    with HTML as a user runs it (the default memory limit: NPU_TRIAGE_MEMORY_LIMIT unset), under a
    small limit, and the parse floor."""
    commands = {}
    runs = (
        (DIAGNOSE, "json,md", None),
        (DIAGNOSE_HTML, "json,md,html", None),
        (DIAGNOSE_LIMITED, "json,md", LIMIT),
    )
    default_env = {k: v for k, v in os.environ.items() if k != "NPU_TRIAGE_MEMORY_LIMIT"}
    for tool, formats, limit in runs:
        if tool not in tools:
            continue
        tag = formats.replace(",", "_") + ("" if limit is None else f"_{limit}")
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
            *([] if limit is None else ["--memory-limit", limit]),
        ]
        commands[tool] = (cmd, f"diagnose_{tag}", default_env)
    if FLOOR not in tools:
        return commands
    floor = [
        sys.executable,
        str(ROOT / "bench" / "parse_floor.py"),
        *[arg for group in item.csv_groups() for arg in ("--csv", *map(str, group))],
        "--json",
        *map(str, item.json_files()),
    ]
    commands[FLOOR] = (floor, "parse_floor", None)
    return commands


def _same_diagnosis(work: Path) -> bool | None:
    """Whether the limited run wrote the same diagnosis.json and .md as the default one (None when
    either did not run)."""
    default, limited = work / "json_md", work / f"json_md_{LIMIT}"
    if not default.is_dir() or not limited.is_dir():
        return None
    files = sorted(p.relative_to(default) for p in default.rglob("diagnosis.*"))
    return bool(files) and all((default / f).read_bytes() == (limited / f).read_bytes() for f in files)


def _input_rows(item: BenchInput, work: Path, repeats: int, tool: Path | None, tools: list[str]) -> list[Row]:
    """Each engine command ``repeats`` times and, on a torch_npu input, msprof-analyze as often
    (until its runs have taken MSPROF_BUDGET_S), round by round: a drift of the machine's speed
    over the minutes an input takes then hits every tool alike, msprof-analyze included, and the
    ratios compare runs made side by side. A row holds the median wall time and the largest peak
    RSS."""
    commands = _engine_commands(item, work, tools)
    samples: dict[str, list[Measurement]] = {name: [] for name in commands}
    msprof: list[Measurement] | None = [] if tool and item.layout == "torch_npu" else None
    for run in range(repeats):
        for name, (cmd, log, env) in commands.items():
            samples[name].append(measure(cmd, work / f"{log}_{run + 1}.log", cwd=ROOT, env=env))
        if tool and msprof is not None and sum(m.wall_s for m in msprof) < MSPROF_BUDGET_S:
            msprof.append(_msprof_run(item, tool, work, run + 1))
    rows = [_row(item, name, ms) for name, ms in samples.items()]
    same = _same_diagnosis(work)
    rows = [replace(r, same_diagnosis=same) if r.tool == DIAGNOSE_LIMITED else r for r in rows]
    return rows if msprof is None else [*rows, _row(item, MSPROF, msprof)]


def _msprof_run(item: BenchInput, tool: Path, work: Path, run: int) -> Measurement:
    before = msprof_analyze.tree_digest(item.path)
    log = work / f"msprof_analyze_{run}.log"
    m = measure(
        msprof_analyze.advisor_command(tool, item.export_folder(), work / f"msprof-analyze_{run}"),
        log,
        cwd=work,
    )
    if m.exit_code != 0:  # a run that stopped early would give a meaningless ratio
        raise SystemExit(f"msprof-analyze failed (exit {m.exit_code}); see {log}")
    msprof_analyze.check_full_analysis(log)
    if msprof_analyze.tree_digest(item.path) != before:
        raise SystemExit(
            f"msprof-analyze wrote inside its input {item.path}; "
            "delete that folder (it is regenerated) and run it on a copy"
        )
    return m


def _msprof_tool(args: argparse.Namespace) -> Path | None:
    venv = args.venv or ROOT / "reports" / "bench" / "msprof-venv"
    if args.skip_msprof_analyze:
        return None
    if args.tiny and not args.with_msprof_analyze and not msprof_analyze.venv_tool(venv).exists():
        return None
    return msprof_analyze.ensure_venv(venv)


def _repeats(args: argparse.Namespace) -> int:
    if args.repeat is None:
        return 1 if args.tiny else 3
    if args.repeat < 1:
        raise SystemExit("--repeat must be at least 1")
    return args.repeat


def _compile_engine() -> None:
    """Compile npu-triage's bytecode once, as pip does when it installs a package (and did for
    msprof-analyze's venv). Run from a clone with PYTHONDONTWRITEBYTECODE set, each diagnose would
    otherwise compile its modules again in every run."""
    compileall.compile_dir(ROOT / "analyzer", quiet=1)


def run_benchmark(args: argparse.Namespace) -> dict:
    start = time.perf_counter()
    _compile_engine()
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    layouts = [s.strip() for s in args.layouts.split(",") if s.strip()]
    unknown = [t for t in args.tools.split(",") if t.strip() and t.strip() not in _TOOL_NAMES]
    if unknown:
        raise SystemExit(f"--tools: unknown {', '.join(unknown)}; known: {', '.join(_TOOL_NAMES)}")
    tools = [_TOOL_NAMES[t.strip()] for t in args.tools.split(",") if t.strip()]
    items = bench_inputs(args.data or args.out / "data", sizes, args.tiny, layouts) + [
        own_input(p) for p in args.export
    ]
    tool = _msprof_tool(args)
    repeats = _repeats(args)
    rows: list[Row] = []
    for item in items:
        work = args.out / "runs" / item.path.name
        print(f"measuring {item.label} ...", file=sys.stderr, flush=True)
        rows += _input_rows(item, work, repeats, tool, tools)
    doc = results_document(rows, args.tiny, time.perf_counter() - start)
    doc["sizes"] = sizes
    doc["repeats"] = repeats
    doc["commit"] = _commit()
    doc["note"] = args.note
    write_json_atomically(args.out / "results.json", doc)
    return doc


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    if args.from_json:
        stored = json.loads((args.out / "results.json").read_text(encoding="utf-8"))
        update_docs(ROOT / "docs" / "benchmark.md", recomputed_document(stored))
        print(f"docs/benchmark.md rewritten from {args.out / 'results.json'}")
        return 0
    doc = run_benchmark(args)
    print_results(doc)
    print(f"wrote {args.out / 'results.json'}")
    if not (args.tiny or args.no_docs):
        update_docs(ROOT / "docs" / "benchmark.md", doc)
        print("wrote docs/benchmark.md")
    return 0


def _commit() -> str:
    """The measured commit (with '+changes' when the work tree differs from it), for docs/benchmark.md."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


if __name__ == "__main__":
    sys.exit(main())
