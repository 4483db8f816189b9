"""Names of dump files: the graph form (5 fields), the stream form (6 fields), FFTS+ suffixes, msaccucmp's .npy."""

from __future__ import annotations

import re
from dataclasses import dataclass

_FFTS = re.compile(r"\.FFTSPLUS\.\d+\.\d+\.\d+$")
_CONVERTED_NPY = re.compile(r"^(?P<dump>.+)\.(?P<slot>input|output)\.(?P<index>\d+)\.npy$")
_SLOT_NPY = re.compile(r"^(?P<op>.+)_(?P<slot>input|output)_(?P<index>\d+)\.npy$")
_STANDARD_NPY = re.compile(r"^(?P<op>[^.]+)\.(?P<index>\d+)\.(?P<time>\d+)\.npy$")


@dataclass(frozen=True)
class DumpName:
    """The fields of a native dump file's name."""

    op_type: str
    op_name: str
    task_id: int
    stream_id: int
    timestamp_us: int
    dump_number: int | None = None


def parse_dump_name(name: str) -> DumpName | None:
    """The fields of a dump file name, None when it is not one.

    >>> parse_dump_name("Conv2D.conv1.3.2.1700000000123456")
    DumpName(op_type='Conv2D', op_name='conv1', task_id=3, stream_id=2, timestamp_us=1700000000123456, dump_number=None)
    >>> parse_dump_name("Add.add_1.0.7.1.17").dump_number
    0
    >>> parse_dump_name("acl.json") is None
    True
    """
    parts = _FFTS.sub("", name).split(".")
    if len(parts) not in (5, 6) or not all(p.isdigit() for p in parts[2:]) or not parts[0] or not parts[1]:
        return None
    numbers = [int(p) for p in parts[2:]]
    if len(parts) == 5:
        return DumpName(parts[0], parts[1], *numbers)
    return DumpName(parts[0], parts[1], numbers[1], numbers[2], numbers[3], numbers[0])


@dataclass(frozen=True)
class NpyName:
    """What a .npy file's name says: operator, slot and index, and its dump name when it has one."""

    op_name: str
    op_type: str
    slot: str
    slot_index: int
    dump: DumpName | None
    timestamp_us: int | None


def parse_npy_name(name: str) -> NpyName | None:
    """msaccucmp's `{dump}.{input|output}.{i}.npy`, `{op}_{input|output}_{i}.npy`, or `{op}.{i}.{time}.npy`.

    >>> parse_npy_name("Conv2D.conv1.3.2.17.output.0.npy").op_name
    'conv1'
    >>> n = parse_npy_name("Conv2D_output_0.npy"); n.op_name, n.slot, n.slot_index
    ('Conv2D', 'output', 0)
    >>> n = parse_npy_name("conv1.1.17.npy"); n.slot, n.slot_index, n.timestamp_us
    ('output', 1, 17)
    """
    if (m := _CONVERTED_NPY.match(name)) and (dump := parse_dump_name(m["dump"])):
        return NpyName(dump.op_name, dump.op_type, m["slot"], int(m["index"]), dump, dump.timestamp_us)
    if m := _SLOT_NPY.match(name):
        return NpyName(m["op"], "", m["slot"], int(m["index"]), None, None)
    if m := _STANDARD_NPY.match(name):
        return NpyName(m["op"], "", "output", int(m["index"]), None, int(m["time"]))
    return None
