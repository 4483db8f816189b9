"""Align the op sequences of two runs' typical steps: matched ops, added and removed ops, renamed op types.

Tokens are (op type, input shapes); difflib finds the longest common runs, so an op inserted
before every MatMul shows up as inserts and leaves the rest aligned. Inside a replaced block,
base and new ops with equal input shapes are paired; a pair whose types differ is a rename
candidate, and a type pair (A -> B) is a rename when A is gone from the new run, B is new, and
most positions of A pair with B (the share is the confidence). An op that only ran at another place in the
step (the same type and input shapes removed at one place and added at another, e.g. a DSA task whose queue
order changed) is paired with itself, not listed as one removed and one added op.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Position:
    """One op of a typical step."""

    ordinal: int
    op_type: str
    op_name_norm: str | None
    input_shapes: str | None
    dur_us: float | None


@dataclass(frozen=True)
class Rename:
    """An op type that became another across the two runs."""

    base_type: str
    new_type: str
    positions: int
    confidence: float  # paired positions / positions of the more frequent of the two types


@dataclass
class Alignment:
    """Pairs of aligned positions, and the positions only one run has."""

    pairs: list[tuple[Position, Position]] = field(default_factory=list)
    added: list[Position] = field(default_factory=list)
    removed: list[Position] = field(default_factory=list)
    renames: list[Rename] = field(default_factory=list)


def _pair_block(base: list[Position], new: list[Position], out: Alignment) -> None:
    """Pair ops of a replaced block by equal input shapes, in order; the rest are added / removed."""
    j_used: set[int] = set()
    for b in base:
        match = next((j for j, n in enumerate(new) if j not in j_used and n.input_shapes == b.input_shapes), None)
        if match is None:
            out.removed.append(b)
        else:
            j_used.add(match)
            out.pairs.append((b, new[match]))
    out.added.extend(n for j, n in enumerate(new) if j not in j_used)


def align_positions(base: list[Position], new: list[Position]) -> Alignment:
    """Align two typical steps (see the module doc)."""
    out = Alignment()
    tokens_b = [(p.op_type, p.input_shapes) for p in base]
    tokens_n = [(p.op_type, p.input_shapes) for p in new]
    matcher = difflib.SequenceMatcher(a=tokens_b, b=tokens_n, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.pairs.extend(zip(base[i1:i2], new[j1:j2], strict=True))
        elif tag == "delete":
            out.removed.extend(base[i1:i2])
        elif tag == "insert":
            out.added.extend(new[j1:j2])
        else:
            _pair_block(base[i1:i2], new[j1:j2], out)
    _find_renames(base, new, out)
    _pair_moved(out)
    return out


def _pair_moved(out: Alignment) -> None:
    """Pair each removed position with the first added one of the same (type, input shapes), in order: the
    same op at another place in the step."""
    waiting: dict[tuple[str, str | None], list[Position]] = {}
    for n in sorted(out.added, key=lambda p: p.ordinal):
        waiting.setdefault((n.op_type, n.input_shapes), []).append(n)
    removed, moved = [], []
    for b in sorted(out.removed, key=lambda p: p.ordinal):
        same = waiting.get((b.op_type, b.input_shapes))
        if same:
            moved.append((b, same.pop(0)))
        else:
            removed.append(b)
    taken = {n.ordinal for _, n in moved}
    out.removed, out.added = removed, sorted((n for n in out.added if n.ordinal not in taken), key=lambda p: p.ordinal)
    out.pairs = sorted([*out.pairs, *moved], key=lambda pair: (pair[0].ordinal, pair[1].ordinal))


def _find_renames(base: list[Position], new: list[Position], out: Alignment) -> None:
    base_types = Counter(p.op_type for p in base)
    new_types = Counter(p.op_type for p in new)
    cross = Counter((b.op_type, n.op_type) for b, n in out.pairs if b.op_type != n.op_type)
    for (a, b_type), count in sorted(cross.items()):
        if a in new_types or b_type in base_types:
            continue  # both types live on in the other run: a swap of ops, not a rename
        confidence = count / max(base_types[a], new_types[b_type])
        if confidence >= 0.5:
            out.renames.append(Rename(a, b_type, count, round(confidence, 3)))
    # pairs of different types that are not renames are really one removed and one added op
    renamed = {(r.base_type, r.new_type) for r in out.renames}
    kept = []
    for b, n in out.pairs:
        if b.op_type != n.op_type and (b.op_type, n.op_type) not in renamed:
            out.removed.append(b)
            out.added.append(n)
        else:
            kept.append((b, n))
    out.pairs = kept
