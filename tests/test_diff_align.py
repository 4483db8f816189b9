"""Aligning two typical steps: an op that only ran elsewhere in the step is the same op, not a removed and an
added one; an op whose shapes changed is."""

from __future__ import annotations

from analyzer.diff.align import Position, align_positions


def _step(*ops: tuple[str, str | None]) -> list[Position]:
    return [Position(i, t, None, shapes, 10.0 + i) for i, (t, shapes) in enumerate(ops)]


def test_an_op_that_ran_elsewhere_in_the_step_is_paired_with_itself():
    # a DSA task whose queue order changed: the same type and shapes, before the MatMul, then after it
    base = _step(("Conv2D", "1,3"), ("DSAGenBitMask", None), ("MatMulV2", "4,4"), ("Add", "4"))
    new = _step(("Conv2D", "1,3"), ("MatMulV2", "4,4"), ("DSAGenBitMask", None), ("Add", "4"))
    out = align_positions(base, new)
    assert out.added == [] and out.removed == []
    assert [(b.ordinal, n.ordinal) for b, n in out.pairs] == [(0, 0), (1, 2), (2, 1), (3, 3)]


def test_near_miss_an_op_whose_shapes_changed_stays_removed_and_added():
    base = _step(("Conv2D", "1,3"), ("DSAGenBitMask", "36864"), ("MatMulV2", "4,4"))
    new = _step(("Conv2D", "1,3"), ("MatMulV2", "4,4"), ("DSAGenBitMask", "16384"))
    out = align_positions(base, new)
    assert [(p.op_type, p.input_shapes) for p in out.removed] == [("DSAGenBitMask", "36864")]
    assert [(p.op_type, p.input_shapes) for p in out.added] == [("DSAGenBitMask", "16384")]
    assert [(b.ordinal, n.ordinal) for b, n in out.pairs] == [(0, 0), (2, 1)]


def test_an_op_added_once_more_than_it_moved_is_one_added_op():
    base = _step(("Cast", "8"), ("MatMulV2", "4,4"))
    new = _step(("MatMulV2", "4,4"), ("Cast", "8"), ("Cast", "8"))
    out = align_positions(base, new)
    assert [(p.ordinal, p.op_type) for p in out.added] == [(2, "Cast")]
    assert out.removed == []


def test_a_diff_without_a_changed_op_type_says_none_instead_of_an_empty_table():
    from rich.console import Console

    from analyzer.diff.model import RunDiff
    from analyzer.diff.noise import compare_samples
    from analyzer.report.diff_markdown import render_diff_markdown
    from analyzer.report.diff_terminal import diff_renderable

    same = compare_samples(_samples(100.0), _samples(100.0))
    diff = RunDiff("a", "b", {}, {}, same, "steps", (), (), (), ())
    console = Console(width=120, record=True)
    console.print(diff_renderable(diff))
    assert "op types beyond noise, added, removed or renamed (median per-step totals): none" in console.export_text()
    assert "No op type beyond noise, added, removed or renamed." in render_diff_markdown(diff)
    assert "| op type | status |" not in render_diff_markdown(diff)


def _samples(value: float):
    import numpy as np

    return np.array([value] * 5)
