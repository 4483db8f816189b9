"""The benchmark's inputs: large exports from the project's generator, cached by parameters."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLICE_ROWS = 1_000_000  # msprof slices op_summary / task_time / msprof_*.json at a million rows

# size name -> device tasks, per layout. torch_npu: about 1,212 bytes of trace_view.json per task,
# so 105,000 tasks write ~127 MB and 525,000 tasks ~635 MB.
# "host-gaps": the generator's large_host_gaps, a host synchronize inside the gap before every task
# (the gaps' causes are then found among as many host events as tasks).
SIZES = {
    "torch_npu": {"1x": 105_000, "5x": 525_000},
    "msprof": {"1x": 200_000, "5x": 1_000_000, "10x": 2_000_000, "host-gaps": 200_000},
}
TINY_SIZES = {
    "torch_npu": {"1x": 400, "5x": 2_000},
    "msprof": {"1x": 400, "5x": 2_000},
}
SCENARIO_OF_SIZE = {"host-gaps": "large_host_gaps"}  # the generator's scenario; "large" for the others
TINY_SLICE_ROWS = 1_000  # so that the tiny msprof inputs are sliced like the big ones


@dataclass(frozen=True)
class BenchInput:
    """One generated export: its layout, size name, device tasks and where it lives."""

    layout: str
    size: str
    tasks: int
    slice_rows: int
    path: Path
    scenario: str = "large"

    @property
    def label(self) -> str:
        if not self.tasks:  # an export of the user's own (``own_input``)
            return f"{self.layout} {self.size}"
        return f"{self.layout} {self.size} ({self.tasks:,} tasks)"

    def files(self, pattern: str) -> list[Path]:
        return sorted(self.path.rglob(pattern))

    def export_folder(self) -> Path:
        """The export folder itself (``*_ascend_pt`` or ``PROF_*``), as msprof-analyze's ``-d`` wants it.

        Given the folder above it, msprof-analyze's advisor finds trace_view.json by walking but not
        kernel_details.csv (its dataset patterns start at ``ASCEND_PROFILER_OUTPUT``), and silently
        skips every operator analysis."""
        folders = [p for p in self.path.iterdir() if p.is_dir()]
        return folders[0] if len(folders) == 1 else self.path

    def csv_groups(self) -> list[list[Path]]:
        """The per-task CSVs the engine reads, by table: kernel_details.csv or the op_summary slices, and
        msprof's task_time slices (each group is one table; its slices are unioned)."""
        groups = [self.files("kernel_details.csv") or self.files("op_summary_*.csv"), self.files("task_time_*.csv")]
        return [g for g in groups if g]

    def json_files(self) -> list[Path]:
        """The timeline JSON files: trace_view.json or the msprof_*.json slices."""
        return self.files("trace_view.json") or self.files("msprof_*.json")

    def largest_file_mb(self) -> float:
        return max(p.stat().st_size for p in self.path.rglob("*") if p.is_file()) / 1e6

    def total_mb(self) -> float:
        return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file()) / 1e6


def own_input(path: Path) -> BenchInput:
    """An export folder given on the command line, measured as it is (never generated or changed)."""
    if not path.is_dir():
        raise SystemExit(f"--export {path}: no such folder")
    msprof = ("op_summary_*.csv", "msprof_*.json", "msprof_*.db")
    layout = "msprof" if any(any(path.rglob(pattern)) for pattern in msprof) else "torch_npu"
    return BenchInput(layout, path.name, 0, 0, path)


def bench_inputs(
    data_dir: Path, sizes: list[str], tiny: bool, layouts: list[str] | tuple[str, ...] = ("torch_npu", "msprof")
) -> list[BenchInput]:
    """Every (layout, size) input asked for, generated into ``data_dir`` when not cached there."""
    table = TINY_SIZES if tiny else SIZES
    slice_rows = TINY_SLICE_ROWS if tiny else SLICE_ROWS
    found = []
    for layout, by_size in table.items():
        if layout not in layouts:
            continue
        for size in sizes:
            if size in by_size:
                tasks, scenario = by_size[size], SCENARIO_OF_SIZE.get(size, "large")
                path = data_dir / f"{scenario}-{layout}-{tasks}tasks-slice{slice_rows}-seed0"
                found.append(BenchInput(layout, size, tasks, slice_rows, path, scenario))
    for item in found:
        ensure_generated(item)
    return found


def generated_once(path: Path, write: Callable[[Path], None]) -> Path:
    """``path``, written by ``write`` into a temporary sibling folder and renamed, unless it exists
    (a run stopped halfway leaves no half-written input behind to be taken for a cached one)."""
    if path.is_dir():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return path


def ensure_generated(item: BenchInput) -> None:
    """Write the export unless its folder exists."""

    def generate(tmp: Path) -> None:
        cmd = [
            sys.executable,
            "-m",
            "fixtures.generator",
            item.scenario,
            str(tmp),
            "--layout",
            item.layout,
            "--tasks",
            str(item.tasks),
            "--slice-rows",
            str(item.slice_rows),
            "--seed",
            "0",
        ]
        print(f"generating {item.label} ...", file=sys.stderr, flush=True)
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)

    generated_once(item.path, generate)
