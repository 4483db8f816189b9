"""The growth benchmark's inputs: one generated input per axis and size, cached, and its parse floor's files."""

from __future__ import annotations

import os
import re
import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from bench.inputs import SLICE_ROWS, BenchInput, ensure_generated, generated_once
from fixtures.generator import LAYOUTS, write_export
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan

# The small distinct runs of a batch: scenario i // 2 of this cycle in layout i % 2 (7 is odd, so
# every scenario comes in both layouts), seed i.
BATCH_SCENARIOS = (
    "healthy",
    "host_sync_low_util",
    "gappy_multistream",
    "comm_not_overlapped",
    "mte_bound_conv",
    "memory_leak",
    "hbm_saturated",
)
JOB_SCENARIO, JOB_SEED, JOB_KERNELS = "job_slow_rank", 41, 134  # about 400 kernels a rank (3 steps)


@dataclass(frozen=True)
class GrowthInput:
    """One axis's input at one size: the folder the command is given."""

    axis: str
    size: int
    path: Path


def _export(data: Path, axis: str, size: int, layout: str, scenario: str) -> GrowthInput:
    item = BenchInput(layout, str(size), size, SLICE_ROWS, data / f"{scenario}-{layout}-{size}tasks-seed0", scenario)
    ensure_generated(item)
    return GrowthInput(axis, size, item.path)


def kernels_input(data: Path, size: int, layout: str) -> GrowthInput:
    """One run of ``size`` kernels (the generator's ``large``)."""
    return _export(data, "kernels", size, layout, "large")


def gaps_input(data: Path, size: int, layout: str) -> GrowthInput:
    """One run of ``size`` kernels, a gap before each holding a host synchronize (``large_host_gaps``)."""
    return _export(data, "gaps", size, layout, "large_host_gaps")


def _batch_run(pool: Path, i: int) -> Path:
    """Run ``i`` of the pool every batch size draws from (generated once)."""
    scenario, layout = BATCH_SCENARIOS[(i // 2) % len(BATCH_SCENARIOS)], LAYOUTS[i % 2]
    return generated_once(pool / f"run_{i:05d}", lambda tmp: write_export(scenario, tmp, layout=layout, seed=i))


def runs_input(data: Path, size: int) -> GrowthInput:
    """A tree of ``size`` small distinct runs (hard links to the pool's files), as ``batch`` is given it."""

    def link(tmp: Path) -> None:
        for i in range(size):
            shutil.copytree(
                _batch_run(data / "batch-pool", i), tmp / f"batch{i // 100:02d}" / f"run_{i:05d}", copy_function=os.link
            )

    return GrowthInput("runs", size, generated_once(data / f"batch-{size}runs", link))


def ranks_input(data: Path, size: int) -> GrowthInput:
    """A job of ``size`` ranks, each with its kernel_details.csv."""
    root = data / f"{JOB_SCENARIO}-{size}ranks-seed{JOB_SEED}"
    generated_once(
        root, lambda tmp: write_job(job_plan(JOB_SCENARIO, ranks=size, seed=JOB_SEED), tmp, kernels=JOB_KERNELS)
    )
    return GrowthInput("ranks", size, root / JOB_SCENARIO)


# the files of a timeline (arrays of events) and the other JSON files (one object each; info.json.0)
_TIMELINE = re.compile(r"^(trace_view\.json|msprof_.*\.json)$")
_JSON = re.compile(r"\.json(\.\d+)?$")


def floor_arguments(root: Path) -> list[str]:
    """``bench/parse_floor.py``'s arguments for every file under ``root``: one CSV table per kind (the
    name without its msprof slice and time stamp), the timeline JSON as events, other JSON as objects."""
    csv, timeline, objects = defaultdict(list), [], []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.suffix == ".csv":
            csv[re.sub(r"(_slice_\d+)?(_\d+)?$", "", path.stem)].append(str(path))
        elif _TIMELINE.match(path.name):
            timeline.append(str(path))
        elif _JSON.search(path.name):
            objects.append(str(path))
    args = [a for kind in sorted(csv) for a in ("--csv", *csv[kind])]
    return args + (["--json", *timeline] if timeline else []) + (["--json-objects", *objects] if objects else [])
