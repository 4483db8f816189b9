"""Writes tiny torch_npu-shaped exports (kernel_details.csv + profiler_info) for the many-runs tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HEADER = "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Input Shapes\n"

# (op type, op name, input shapes, mean duration in us)
MODEL = [
    ("MatMulV2", "MatMulV2_1", "64,128;128,256", 100.0),
    ("Add", "Add_2", "64,256;64,256", 20.0),
    ("Relu", "Relu_3", "64,256", 15.0),
    ("MatMulV2", "MatMulV2_4", "64,256;256,64", 80.0),
    ("Softmax", "Softmax_5", "64,64", 30.0),
]


def write_tiny_export(
    folder: Path,
    *,
    seed: int = 0,
    steps: int = 8,
    program=MODEL,
    jitter: float = 0.02,
    cann: str = "8.0.RC1",
    model: str | None = None,
    batch_size: int | None = None,
) -> Path:
    """Write one export under ``folder`` and return it."""
    rng = np.random.default_rng(seed)
    out = folder / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True, exist_ok=True)
    lines, t = [HEADER], 1_700_000_000_000_000.0
    for step in range(1, steps + 1):
        for op_type, name, shapes, mean in program:
            dur = round(mean * (1 + jitter * rng.standard_normal()), 3)
            lines.append(f'{step},{name},{op_type},AI_CORE,{t:.3f}\t,{dur},"""{shapes}"""\n')
            t += dur + 2.0
        t += 50.0
    (out / "kernel_details.csv").write_text("".join(lines))
    info = {"config": {"experimental_config": {"_profiler_level": "Level1"}}, "cann_version": cann}
    if model:
        info["model_name"] = model
    if batch_size:
        info["batch_size"] = batch_size
    (folder / "profiler_info_0.json").write_text(json.dumps(info))
    return folder
