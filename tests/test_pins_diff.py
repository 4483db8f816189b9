"""The run diff pinned by its signs and its noise: which way a type moved, and many types judged together."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analyzer.cli import main
from analyzer.diff.noise import compare_samples, judge
from tests.tiny_exports import MODEL, write_tiny_export


@pytest.fixture(scope="module")
def moved_pair(tmp_path_factory):
    """Two 8-step runs of the tiny model; in the second MatMulV2 takes 30% longer and Softmax 40% less."""
    root = tmp_path_factory.mktemp("pair")
    factor = {"MatMulV2": 1.3, "Softmax": 0.6}
    program = [(t, n, s, mean * factor.get(t, 1.0)) for t, n, s, mean in MODEL]
    base = write_tiny_export(root / "base", seed=1, jitter=0.01)
    new = write_tiny_export(root / "new", seed=2, program=program, jitter=0.01)
    out = root / "diff.json"
    assert main(["diff", str(base), str(new), "--json", str(out)]) == 0
    return json.loads(out.read_text())


@pytest.mark.slow
def test_pins_diff_json_signs_follow_new_minus_base(moved_pair):
    types = {t["op_type"]: t for t in moved_pair["types"]}
    matmul, softmax = types["MatMulV2"], types["Softmax"]
    assert (matmul["status"], softmax["status"]) == ("slower", "faster")
    # MatMulV2 totals 180 us a step, Softmax 30 us: +54 us and -12 us
    assert matmul["delta_us"] == pytest.approx(54.0, rel=0.02)
    assert softmax["delta_us"] == pytest.approx(-12.0, rel=0.02)
    assert matmul["shift"]["rel_change"] == pytest.approx(0.3, abs=0.01)
    assert softmax["shift"]["rel_change"] == pytest.approx(-0.4, abs=0.01)
    assert matmul["shift"]["new_median"] > matmul["shift"]["base_median"]
    assert 0 < matmul["shift"]["ci_low"] < matmul["shift"]["ci_high"]
    assert softmax["shift"]["ci_low"] < softmax["shift"]["ci_high"] < 0
    assert types["Add"]["status"] == "unchanged"
    step = moved_pair["step"]  # +54 - 12 us on a 252 us step
    assert step["rel_change"] == pytest.approx(42 / 252, abs=0.01) and step["ci_low"] > 0


def test_pins_diff_many_types_are_judged_against_a_corrected_band():
    # Eight steps spread over +-4%; each of 20 types moves by 2.4 to 3.5 robust standard errors: beyond a
    # band for one comparison, within the band corrected for 20. One more type moves by 10 of them.
    base = np.array([96, 97, 98, 99, 101, 102, 103, 104.0])
    shifts = [compare_samples(base, base + 4.5 + 2.0 * i / 19) for i in range(20)]
    clear = compare_samples(base, base + 20.0)
    judged = judge([*shifts, clear])
    assert [s.verdict for s in judged] == ["within noise"] * 20 + ["beyond noise"]
    assert all(judge([s])[0].verdict == "beyond noise" for s in shifts)  # each alone is a change


@pytest.mark.slow
def test_pins_diff_against_a_run_without_steps_compares_whole_run_totals(tmp_path):
    # 8 steps of the tiny model against the same 8 iterations written with no step id, MatMulV2 30% longer:
    # each type's whole-run total on both sides (180 us x 8 = 1440 us of MatMulV2, +432 us).
    program = [(t, n, s, mean * (1.3 if t == "MatMulV2" else 1.0)) for t, n, s, mean in MODEL]
    base = write_tiny_export(tmp_path / "base", seed=1, jitter=0.01)
    new = write_tiny_export(tmp_path / "new", seed=2, program=program, jitter=0.01)
    ops = new / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    ops.write_text("".join(line.split(",", 1)[1] for line in ops.read_text().splitlines(keepends=True)))
    out = tmp_path / "diff.json"
    assert main(["diff", str(base), str(new), "--json", str(out), "--force"]) == 0
    d = json.loads(out.read_text())
    assert d["step_basis"] == "span"
    matmul = next(t for t in d["types"] if t["op_type"] == "MatMulV2")
    assert matmul["shift"]["base_median"] == pytest.approx(1440.0, rel=0.01)
    assert matmul["delta_us"] == pytest.approx(432.0, rel=0.02)
    assert matmul["shift"]["rel_change"] == pytest.approx(0.3, abs=0.01)
    assert matmul["shift"]["verdict"] == "no noise estimate"
