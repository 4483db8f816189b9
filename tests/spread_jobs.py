"""A small generated job whose ranks carry kernel_details, one rank's file cut mid-row (the spread-read tests)."""

from __future__ import annotations

from pathlib import Path

from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan

DAMAGED_RANK = 5


def write_damaged_job(out_dir: Path, ranks: int = 8, seed: int = 3) -> Path:
    """A job_slow_rank of ``ranks`` ranks with a few kernels a step; rank DAMAGED_RANK's kernel_details.csv
    ends mid-row, as a copy cut short leaves it."""
    root = write_job(job_plan("job_slow_rank", ranks, seed=seed), out_dir, kernels=6)
    cut = next(root.glob(f"rank{DAMAGED_RANK}_*")) / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    data = cut.read_bytes()
    cut.write_bytes(data[: len(data) // 2 + 17])
    return root
