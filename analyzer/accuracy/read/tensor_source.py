"""One tensor of a dump or a reference: where its bytes are and how to read any flat range of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from analyzer.accuracy.read.formats import CONVERTED, to_original

SLOTS = ("input", "output", "buffer", "workspace", "tiling")


@dataclass(frozen=True)
class TensorSource:
    """A tensor named by operator and slot; its data stays on disk until a range is read.

    ``offset`` is the byte offset of the stored data in ``path``; ``fmt`` its device format. A plain
    layout (stored order = original order) is read range by range through a fresh memory map, so
    that a tensor of any size is compared in bounded memory; a device format is converted whole.
    """

    op_name: str
    op_type: str
    slot: str
    slot_index: int
    path: Path
    offset: int
    dtype: np.dtype
    dtype_name: str
    fmt: str
    shape: tuple[int, ...]
    original_shape: tuple[int, ...]
    kind: str  # 'native' | 'npy' | 'pt'
    order_key: tuple = ()  # execution order on its side: (timestamp_us, task_id), empty when unknown
    task_id: int | None = None
    stream_id: int | None = None
    timestamp_us: int | None = None
    loaded: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def element_count(self) -> int:
        return int(np.prod(self.logical_shape, dtype=np.int64))

    @property
    def logical_shape(self) -> tuple[int, ...]:
        """The shape compared: the original shape when the format is converted, else the stored one."""
        return self.original_shape if self.is_converted else self.shape

    @property
    def is_converted(self) -> bool:
        """True when the stored layout is a device format whose original shape differs from the stored one."""
        return self.fmt in CONVERTED and bool(self.original_shape) and tuple(self.original_shape) != tuple(self.shape)

    @property
    def size_bytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def read(self, start: int, stop: int) -> np.ndarray:
        """Elements [start, stop) of the tensor in original C order, as an array of its own dtype (a copy)."""
        return np.array(self.view(start, stop))  # the map goes with the view: RSS stays bounded

    def view(self, start: int, stop: int) -> np.ndarray:
        """Elements [start, stop) without a copy: a memory map of just that range for a plain layout (its
        pages count in RSS until the caller drops it), else a slice of the tensor held in memory."""
        if self.loaded is not None:
            return self.loaded.reshape(-1)[start:stop]
        if self.is_converted:
            return self.whole().reshape(-1)[start:stop]
        count = stop - start
        if count <= 0:
            return np.empty(0, self.dtype)
        return np.memmap(self.path, self.dtype, "r", self.offset + start * self.dtype.itemsize, (count,))

    def whole(self) -> np.ndarray:
        """The tensor in its original layout and shape (read and converted in memory)."""
        if self.loaded is not None:
            return self.loaded.reshape(self.logical_shape)
        count = int(np.prod(self.shape, dtype=np.int64))
        flat = np.fromfile(self.path, self.dtype, count, offset=self.offset)
        return np.ascontiguousarray(to_original(flat, self.fmt, self.shape, self.original_shape))
