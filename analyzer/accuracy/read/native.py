"""Native adump files: 8-byte header length, DumpData header, then the raw input/output/buffer/workspace bytes."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
from google.protobuf.message import DecodeError, Message

from analyzer.accuracy.read.dtypes import dtype_name, numpy_dtype
from analyzer.accuracy.read.dump_names import DumpName
from analyzer.accuracy.read.formats import CONVERTED, PLAIN, conversion_problem, format_name
from analyzer.accuracy.read.header_proto import DumpData
from analyzer.accuracy.read.problems import ReadProblems, reason
from analyzer.accuracy.read.tensor_source import TensorSource
from analyzer.errors import TriageError

TILING_INPUT_TYPE = 7  # OpInput.input_type of the tiling data


class DumpFileError(TriageError, ValueError):
    """A dump file that cannot be read at all (its header)."""


def read_header(path: Path) -> tuple[Message, int, int]:
    """(header, offset of the first tensor byte, file size); DumpFileError when the header is unusable."""
    size = path.stat().st_size
    with path.open("rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            raise DumpFileError(f"{size} bytes: too short for the 8-byte header length")
        (length,) = struct.unpack("<Q", head)
        if length > size - 8:
            raise DumpFileError(f"header length {length} is past the end of the file ({size} bytes)")
        header = DumpData()
        try:
            header.ParseFromString(fh.read(length))
        except DecodeError as exc:
            raise DumpFileError(f"the DumpData header does not decode ({exc})") from None
    return header, 8 + length, size


def read_native(path: Path, name: DumpName, problems: ReadProblems) -> list[TensorSource]:
    """The tensors of one native dump file; what cannot be read is logged in ``problems``."""
    try:
        header, offset, size = read_header(path)
    except (OSError, DumpFileError) as exc:
        problems.error(path, "header", reason(exc))
        return []
    slots = [("input", t) for t in header.input] + [("output", t) for t in header.output]
    slots += [("buffer", t) for t in header.buffer] + [("workspace", t) for t in header.space]
    total = offset + sum(int(t.size) for _, t in slots)
    if total > size:
        problems.error(path, "data", f"the header's tensor sizes end at byte {total}, past the file's {size} bytes")
        return []
    tensors: list[TensorSource] = []
    counters: dict[str, int] = {}
    for slot, entry in slots:
        kind = "tiling" if slot == "input" and entry.input_type == TILING_INPUT_TYPE else slot
        index = counters.get(kind, 0)
        counters[kind] = index + 1
        if kind in ("input", "output"):
            tensor = _tensor(path, name, kind, index, entry, offset, problems)
            tensors += [tensor] if tensor else []
        elif kind == "tiling":
            tensors.append(_tiling(path, name, index, int(entry.size), offset))
        offset += int(entry.size)
    return tensors


def _tiling(path: Path, name: DumpName, index: int, size: int, offset: int) -> TensorSource:
    """The tiling data an operator was given, as raw bytes (kept apart: never compared element by element)."""
    return TensorSource(
        name.op_name, name.op_type, "tiling", index, path, offset, np.dtype(np.uint8), "uint8", "ND", (size,), (),
        "native", (name.timestamp_us, name.task_id), name.task_id, name.stream_id, name.timestamp_us,
    )  # fmt: skip


def _tensor(path, name: DumpName, slot: str, index: int, entry, offset: int, problems: ReadProblems):
    where = f"{slot} {index}"
    dtype, fmt = numpy_dtype(entry.data_type), format_name(entry.format)
    shape = tuple(int(d) for d in entry.shape.dim)
    original = tuple(int(d) for d in entry.original_shape.dim) if entry.HasField("original_shape") else ()
    if dtype is None:
        problems.error(path, where, f"data type {dtype_name(entry.data_type)} cannot be read into numpy")
        return None
    if fmt not in PLAIN | CONVERTED:
        problems.error(path, where, f"format {fmt} is not one npu-triage converts (ND, NCHW, NHWC, NC1HWC0, ...)")
        return None
    if problem := conversion_problem(fmt, shape, original):
        problems.error(path, where, f"{fmt}: {problem}")
        return None
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if expected != int(entry.size):
        problems.error(
            path, where, f"size {entry.size} bytes disagrees with shape {list(shape)} x {dtype.name} ({expected} bytes)"
        )
        return None
    return TensorSource(
        name.op_name, name.op_type, slot, index, path, offset, dtype, dtype_name(entry.data_type), fmt, shape,
        original, "native", (name.timestamp_us, name.task_id), name.task_id, name.stream_id, name.timestamp_us,
    )  # fmt: skip
