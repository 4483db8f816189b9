"""The growth benchmark's commands for one input: npu-triage (here and a baseline), parse floor, msprof-analyze."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.growth_inputs import GrowthInput, floor_arguments

ROOT = Path(__file__).resolve().parents[1]
NPU = "npu-triage"
BASE = "npu-triage baseline"
FLOOR = "parse floor"
MSPROF = "msprof-analyze cluster -m all"
ENGINE_TOOLS = (NPU, BASE)
# What the engine writes per axis: a run's findings (as bench/run.py's main row); a job's
# diagnosis, job page and per-rank reports (issue 44's acceptance).
FORMATS = {"kernels": "json,md", "gaps": "json,md", "ranks": "json,md,html"}
BATCH_JOBS = 2


@dataclass(frozen=True)
class Command:
    """One measured command: its argv given the folder it writes, working folder, environment, and the
    stem of that folder (each round writes a new one: ``round_output``)."""

    argv_for: Callable[[Path], list[str]]
    cwd: Path
    env: dict[str, str]
    output: Path

    def round_output(self, run: int) -> Path:
        """The folder round ``run`` (from 1) writes: a new one per round. Deleting an earlier round's
        thousands of files just before a run makes the file system slow to create the next ones (ext4
        skips recently freed inodes one by one), a cost of the benchmark's cleanup, not of the command."""
        return self.output.with_name(f"{self.output.name}.{run}")


def _engine_env(base: Path | None, cache: Path) -> dict[str, str]:
    """The user's environment without a memory limit; a baseline's bytecode cached outside its checkout."""
    env = {k: v for k, v in os.environ.items() if k != "NPU_TRIAGE_MEMORY_LIMIT"}
    if base is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def compile_baseline(base: Path, cache: Path) -> None:
    """Compile the baseline's bytecode once into ``cache`` (never inside its checkout), as bench/run.py
    compiles this checkout's: neither side pays compiling in its measured runs."""
    code = "import compileall, sys; compileall.compile_dir(sys.argv[1], quiet=1)"
    env = _engine_env(base, cache)
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-c", code, str(base / "analyzer")], env=env, cwd=cache.parent, check=True)


def engine_command(item: GrowthInput, work: Path, base: Path | None, cache: Path) -> Command:
    """``diagnose`` of a run or job, or ``batch`` of a tree of runs (into a fresh catalog), run from
    this checkout or from the baseline's (``python -m analyzer`` in its folder imports its code)."""

    def argv(out: Path) -> list[str]:
        if item.axis == "runs":
            tail = ["batch", str(item.path), "--catalog", str(out / "catalog.duckdb"), "--jobs", str(BATCH_JOBS)]
        else:
            tail = ["diagnose", str(item.path), "--out", str(out), "--format", FORMATS[item.axis]]
        return [sys.executable, "-m", "analyzer", *tail]

    return Command(argv, base or ROOT, _engine_env(base, cache), work / ("baseline" if base else "npu-triage"))


def floor_command(item: GrowthInput, work: Path) -> Command:
    """bench/parse_floor.py over every file of the input, its (long) argument list in a file."""
    args = work / "parse_floor.args"
    args.parent.mkdir(parents=True, exist_ok=True)
    args.write_text("\n".join(floor_arguments(item.path)) + "\n", encoding="utf-8")
    argv = [sys.executable, str(ROOT / "bench" / "parse_floor.py"), f"@{args}"]
    return Command(lambda _out: argv, ROOT, dict(os.environ), work / "parse_floor")


def msprof_command(item: GrowthInput, work: Path, tool: Path) -> Command:
    return Command(
        lambda out: [str(tool), "cluster", "-d", str(item.path), "-m", "all", "-o", str(out)],
        work,
        dict(os.environ),
        work / "msprof-analyze",
    )


def commands(item: GrowthInput, work: Path, base: Path | None, msprof: Path | None, cache: Path) -> dict[str, Command]:
    """Tool -> command for one input: npu-triage, its baseline (when given; its bytecode in ``cache``),
    the parse floor, and msprof-analyze on a job (when given)."""
    found = {NPU: engine_command(item, work, None, cache)}
    if base is not None:
        found[BASE] = engine_command(item, work, base, cache)
    found[FLOOR] = floor_command(item, work)
    if msprof is not None and item.axis == "ranks":
        found[MSPROF] = msprof_command(item, work, msprof)
    return found


def fresh(command: Command, run: int, trash: Path) -> Path:
    """The new, empty folder round ``run`` of ``command`` writes (a batch skips the runs its catalog holds).
    What an earlier benchmark left there is moved into ``trash`` (deleted once the benchmark is done)."""
    out = command.round_output(run)
    if out.exists():
        trash.mkdir(parents=True, exist_ok=True)
        out.rename(trash / f"{len(list(trash.iterdir()))}-{out.name}")
    out.mkdir(parents=True)
    return out


def clean_up(cmds: dict[str, Command], keep: int, trash: Path) -> None:
    """Once every input is measured: remove every round's folder but round ``keep``'s, and ``trash``."""
    for cmd in cmds.values():
        for folder in cmd.output.parent.glob(f"{cmd.output.name}.*"):
            if folder.is_dir() and folder != cmd.round_output(keep):
                shutil.rmtree(folder)
    shutil.rmtree(trash, ignore_errors=True)
