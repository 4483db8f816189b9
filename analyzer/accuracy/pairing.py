"""Pair each dump tensor with its reference by operator name, slot, index and occurrence, in execution order."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from analyzer.accuracy.read.tensor_source import TensorSource

Key = tuple[str, str, int, int]  # op_name, slot, slot_index, occurrence


@dataclass(frozen=True)
class Pair:
    """A dump tensor and its reference, with the operator's place in the execution order."""

    dump: TensorSource
    reference: TensorSource
    exec_order: int
    occurrence: int


@dataclass(frozen=True)
class Unpaired:
    """A tensor left without a partner, and why."""

    side: str  # 'dump' | 'reference'
    tensor: TensorSource
    exec_order: int | None
    occurrence: int
    reason: str


def keyed(tensors: list[TensorSource]) -> dict[Key, TensorSource]:
    """Each tensor by (op_name, slot, index, occurrence): the n-th time the operator ran on its side."""
    by_slot: dict[tuple, list[TensorSource]] = defaultdict(list)
    for t in tensors:
        by_slot[t.op_name, t.slot, t.slot_index].append(t)
    out = {}
    for (op, slot, index), group in by_slot.items():
        for n, t in enumerate(sorted(group, key=lambda t: (t.order_key, str(t.path)))):
            out[op, slot, index, n] = t
    return out


def operator_order(dump: dict[Key, TensorSource], reference: dict[Key, TensorSource]) -> dict[tuple[str, int], int]:
    """Execution rank of each (op_name, occurrence): the dump's order, else the reference's, else by name."""

    def first_seen(side: dict[Key, TensorSource]) -> dict[tuple[str, int], tuple]:
        seen: dict[tuple[str, int], tuple] = {}
        for (op, _, _, n), t in side.items():
            if t.order_key:
                seen[op, n] = min(seen.get((op, n), t.order_key), t.order_key)
        return seen

    own, other = first_seen(dump), first_seen(reference)
    ops = {(k[0], k[3]) for k in (*dump, *reference)}
    if len(own) == len(ops):
        rank_key = {op: (0, own[op]) for op in ops}
    else:
        rank_key = {op: (0, other[op]) if op in other else (1, (op[1], op[0])) for op in ops}
    ordered = sorted(ops, key=lambda op: (rank_key[op], op))
    return {op: i for i, op in enumerate(ordered)}


def pair_tensors(dump: list[TensorSource], reference: list[TensorSource]) -> tuple[list[Pair], list[Unpaired]]:
    """Pairs in execution order, and every tensor that has no partner (or a partner of another size)."""
    d, r = keyed(dump), keyed(reference)
    order = operator_order(d, r)
    pairs, unpaired = [], []
    for key in sorted({*d, *r}, key=lambda k: (order[k[0], k[3]], k[1], k[2])):
        rank = order[key[0], key[3]]
        if key not in r:
            unpaired.append(Unpaired("dump", d[key], rank, key[3], "no reference tensor of this name and slot"))
        elif key not in d:
            unpaired.append(Unpaired("reference", r[key], rank, key[3], "no dump tensor of this name and slot"))
        elif reason := shape_problem(d[key], r[key]):
            unpaired.append(Unpaired("dump", d[key], rank, key[3], reason))
        else:
            pairs.append(Pair(d[key], r[key], rank, key[3]))
    return pairs, unpaired


def shape_problem(dump: TensorSource, reference: TensorSource) -> str | None:
    """Why two tensors cannot be compared element by element, or None (shapes equal up to 1-sized axes)."""
    a, b = dump.logical_shape, reference.logical_shape
    if tuple(x for x in a if x != 1) == tuple(x for x in b if x != 1):
        return None
    return f"shape {list(a)} differs from the reference's {list(b)}"
