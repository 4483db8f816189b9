"""Frozen results of a run diff, handed to the renderers (terminal, JSON, Markdown, HTML)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from analyzer.diff.align import Rename
from analyzer.diff.noise import Shift

CHANGED = ("slower", "faster", "added", "removed", "renamed")  # the statuses listed as changes


def type_counts_text(types) -> str:
    """'3 other op type(s) unchanged (95% interval covers 0), 1 within noise (not confirmed)'."""
    unchanged = sum(t.status == "unchanged" for t in types)
    within = sum(t.status == "within noise" for t in types)
    return f"{unchanged} other op type(s) unchanged (95% interval covers 0), {within} within noise (not confirmed)"


@dataclass(frozen=True)
class TypeDelta:
    """One op type: per-step totals of base against new. status: 'slower' or 'faster' (beyond noise),
    'unchanged' (the interval covers 0), 'within noise' (it does not, but the change is not confirmed),
    'no noise estimate' (under 3 steps a side), 'added', 'removed' or 'renamed' ('Old -> New')."""

    op_type: str
    status: str
    shift: Shift
    delta_us: float  # change of the median per-step total
    base_launches: int
    new_launches: int


@dataclass(frozen=True)
class OpDelta:
    """One aligned op position (median over the typical steps)."""

    base_ordinal: int
    new_ordinal: int
    op_type: str
    input_shapes: str | None
    base_us: float | None
    new_us: float | None


@dataclass(frozen=True)
class OpChange:
    """Ops one run has and the other lacks, grouped by type (e.g. 'TransData added x 4')."""

    op_type: str
    change: str  # 'added' | 'removed'
    count: int  # positions in a typical step
    total_us: float  # their median durations summed


@dataclass(frozen=True)
class RunDiff:
    """Everything a diff found. Labels carry the CANN version from metadata."""

    base_label: str
    new_label: str
    base_run: dict[str, Any]
    new_run: dict[str, Any]
    step: Shift
    step_basis: str  # 'steps' (per-step times) or 'span' (no steps: whole-run span)
    types: tuple[TypeDelta, ...]
    op_deltas: tuple[OpDelta, ...]
    op_changes: tuple[OpChange, ...]
    renames: tuple[Rename, ...]
    pipe_shares: dict[str, Shift] = field(default_factory=dict)  # per pipe: share of core time per step
    findings_new: tuple[dict[str, Any], ...] = ()
    findings_resolved: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()

    def regressions(self, pct: float) -> list[str]:
        """What slowed by more than ``pct`` percent beyond noise (the step, or op types)."""
        out = []
        if self.step.significant and (self.step.rel_change or 0) * 100 > pct:
            out.append(f"step time +{self.step.rel_change:.1%}")
        for t in self.types:
            if t.status in ("slower", "renamed") and t.shift.significant and (t.shift.rel_change or 0) * 100 > pct:
                out.append(f"{t.op_type} +{t.shift.rel_change:.1%}")
        return out
