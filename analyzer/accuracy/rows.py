"""Rows of the accuracy tables from tensors, pairs and metrics (one dict per tensor, never per element)."""

from __future__ import annotations

from pathlib import Path

from analyzer.accuracy.pairing import Pair, Unpaired, keyed
from analyzer.accuracy.read.folder import TensorFolder
from analyzer.accuracy.read.tensor_source import TensorSource
from analyzer.accuracy.read.tiling import tiling_info_rows, tiling_input_row


def relative(folder: TensorFolder, path: Path) -> str:
    """A tensor's file relative to the folder given (its name when that is the file)."""
    try:
        return Path(path).relative_to(folder.root).as_posix()
    except ValueError:
        return Path(path).name


def tensor_rows(run_id: str, side: str, folder: TensorFolder, order: dict[tuple[str, int], int]) -> list[dict]:
    """A tensors row for every tensor of one side."""
    rows = []
    for (op, slot, index, occurrence), t in keyed(folder.tensors).items():
        rows.append(
            {
                "run_id": run_id, "side": side, "op_name": op, "occurrence": occurrence, "slot": slot,
                "slot_index": index, "exec_order": order.get((op, occurrence)), "op_type": t.op_type,
                "dtype": t.dtype_name, "format": t.fmt, "shape": list(t.shape),
                "original_shape": list(t.logical_shape), "element_count": t.element_count,
                "size_bytes": t.size_bytes, "task_id": t.task_id, "stream_id": t.stream_id,
                "timestamp_us": t.timestamp_us, "source_kind": t.kind, "source_file": relative(folder, t.path),
            }
        )  # fmt: skip
    return rows


def _key(run_id: str, t: TensorSource, occurrence: int, exec_order: int | None) -> dict:
    return {
        "run_id": run_id, "op_name": t.op_name, "occurrence": occurrence, "slot": t.slot,
        "slot_index": t.slot_index, "exec_order": exec_order,
    }  # fmt: skip


def compare_row(run_id: str, pair: Pair, measured: dict, sides: dict[str, TensorFolder]) -> dict:
    """The tensor_compare row of one pair."""
    row = _key(run_id, pair.dump, pair.occurrence, pair.exec_order)
    row |= {
        "op_type": pair.dump.op_type or pair.reference.op_type,
        "dtype": pair.dump.dtype_name,
        "ref_dtype": pair.reference.dtype_name,
        "element_count": pair.dump.element_count,
        "dump_file": relative(sides["dump"], pair.dump.path),
        "reference_file": relative(sides["reference"], pair.reference.path),
    }
    return row | measured


def unpaired_row(run_id: str, item: Unpaired, sides: dict[str, TensorFolder]) -> dict:
    """The unpaired_tensors row of a tensor left without a partner."""
    row = _key(run_id, item.tensor, item.occurrence, item.exec_order)
    row |= {"side": item.side, "op_type": item.tensor.op_type, "reason": item.reason}
    return row | {"source_file": relative(sides[item.side], item.tensor.path)}


def tiling_rows(run_id: str, side: str, folder: TensorFolder) -> list[dict]:
    """tiling_data rows of one side: its native files' tiling inputs, then its tiling_info.json entries."""
    rows = [
        tiling_input_row(t, key[3]) | {"source_file": relative(folder, t.path)}
        for key, t in keyed(folder.tilings).items()
    ]
    for path in folder.tiling_files:
        rows += [r | {"source_file": relative(folder, path)} for r in tiling_info_rows(path, folder.problems)]
    return [{"run_id": run_id, "side": side} | r for r in rows]
