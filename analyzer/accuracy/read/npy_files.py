""".npy tensors (msaccucmp's converted names, `{op}_{slot}_{i}.npy`, `{op}.{i}.{time}.npy`) and .pt tensors."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from analyzer.accuracy.read.dtypes import name_of
from analyzer.accuracy.read.dump_names import NpyName
from analyzer.accuracy.read.problems import ReadProblems, reason
from analyzer.accuracy.read.tensor_source import TensorSource


def read_npy(path: Path, name: NpyName, problems: ReadProblems) -> TensorSource | None:
    """The tensor of a .npy file, read lazily from its data offset; None (logged) when unreadable."""
    try:
        with path.open("rb") as fh:
            version = np.lib.format.read_magic(fh)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read(fh)
            offset = fh.tell()
        size = path.stat().st_size
    except (OSError, ValueError, SyntaxError) as exc:
        problems.error(path, "header", f"not a readable .npy file ({reason(exc)})")
        return None
    if dtype.hasobject or dtype.kind == "V":
        problems.error(path, "header", f"dtype {dtype} is not a numeric tensor")
        return None
    needed = offset + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if needed > size:
        problems.error(path, "data", f"shape {list(shape)} x {dtype} needs {needed} bytes, the file has {size}")
        return None
    loaded = np.load(path, mmap_mode="r") if fortran else None
    order = (name.timestamp_us, name.dump.task_id if name.dump else 0) if name.timestamp_us is not None else ()
    return TensorSource(
        name.op_name, name.op_type, name.slot, name.slot_index, path, offset, dtype, name_of(dtype), "ND",
        tuple(shape), (), "npy", order, name.dump.task_id if name.dump else None,
        name.dump.stream_id if name.dump else None, name.timestamp_us,
        None if loaded is None else np.ascontiguousarray(loaded),
    )  # fmt: skip


def torch_available() -> bool:
    """True when torch can be imported (a .pt reference needs it)."""
    return importlib.util.find_spec("torch") is not None


def read_pt(path: Path, name: NpyName, problems: ReadProblems) -> TensorSource | None:
    """The tensor of a .pt file (torch.save of one tensor), loaded whole; None (logged) without torch."""
    if not torch_available():
        problems.error(
            path, "file", "a .pt tensor needs torch, which is not installed", "pip install torch, or save .npy"
        )
        return None
    import torch

    try:
        value = torch.load(path, map_location="cpu", weights_only=True)
        array = value.detach().float().numpy() if value.dtype == torch.bfloat16 else value.detach().numpy()
    except Exception as exc:  # noqa: BLE001 - torch raises many kinds for a bad file
        problems.error(path, "file", f"not a readable tensor file ({type(exc).__name__}: {exc})")
        return None
    array = np.ascontiguousarray(array)
    return TensorSource(
        name.op_name, name.op_type, name.slot, name.slot_index, path, 0, array.dtype, name_of(array.dtype), "ND",
        array.shape, (), "pt", (), None, None, name.timestamp_us, array,
    )  # fmt: skip
