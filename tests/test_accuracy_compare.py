"""Accuracy comparison: metrics against a float64 recomputation, and the verdicts on generated dump sets."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from analyzer.accuracy import compare
from analyzer.accuracy.comparison import compare_folders
from analyzer.accuracy.judge import judge
from analyzer.accuracy.metrics import REL_EPS
from analyzer.accuracy.pairing import Pair
from analyzer.accuracy.read.tensor_source import TensorSource
from analyzer.ingest.database import connect
from analyzer.rule_engine.loader import load_rules
from analyzer.rule_engine.model import ConfiguredRules
from fixtures.dumps.generate import generate

RULES = ConfiguredRules(tuple(r for r in load_rules(Path(__file__).parents[1] / "rules") if r.scope == "dump"))


def _source(array: np.ndarray) -> TensorSource:
    return TensorSource("op", "T", "output", 0, Path("mem"), 0, array.dtype, array.dtype.name, "ND", array.shape, (),
                        "npy", (), loaded=array)  # fmt: skip


def _float64_metrics(x: np.ndarray, y: np.ndarray) -> dict:
    x, y = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    both = np.isfinite(x) & np.isfinite(y)
    x, y = x[both], y[both]
    d = np.abs(x - y)
    rel = d[np.abs(y) > REL_EPS] / np.abs(y[np.abs(y) > REL_EPS])
    return {
        "cosine": float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y))),
        "max_abs_err": float(d.max()), "mean_abs_err": float(d.mean()), "max_rel_err": float(rel.max()),
        "mean_rel_err": float(rel.mean()), "rmse": float(np.sqrt((d**2).mean())),
        "rel_euclidean": float(np.sqrt((d**2).sum() / (y**2).sum())),
    }  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_metrics_equal_a_float64_recomputation_over_many_chunks(monkeypatch, dtype):
    monkeypatch.setattr(compare, "BLOCK_ELEMENTS", 1000)  # many blocks and chunks, combined
    monkeypatch.setattr(compare, "CHUNK_ELEMENTS", 300)
    rng = np.random.default_rng(2024)
    y = rng.standard_normal(10_007).astype(np.float32) * 3
    x = (y * (1 + 0.01 * rng.standard_normal(y.size))).astype(dtype)
    x[[5, 900]], y[[77]] = np.nan, np.inf
    [got] = compare.compare_pairs([Pair(_source(x), _source(y), 0, 0)], threads=2)
    for name, value in _float64_metrics(x, y).items():
        assert math.isclose(got[name], value, rel_tol=1e-6), name
    assert (got["dump_nan_count"], got["ref_inf_count"], got["nonfinite_mismatch_count"]) == (2, 1, 3)


CASES = [
    (4101, "tile", 8, 24, "float16"), (4102, "channel", 12, 16, "float16"), (4103, "overflow", 8, 16, "float16"),
    (4104, "drift", 16, 20, "float16"), (4107, "drift", 8, 16, "bfloat16"),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "fault", "channels", "size", "dtype"), CASES, ids=[f"{c[1]}-{c[4]}" for c in CASES])
def test_generated_fault_is_the_first_divergent_operator_with_its_verdict(tmp_path, seed, fault, channels, size, dtype):
    truth = generate(tmp_path, seed, fault, channels, size, dtype=dtype, profile=False)
    report = judge(compare_folders(tmp_path / "dump" / "native", tmp_path / "reference" / "npy", connect()), RULES)
    first = report.findings[0]
    assert (first.code, first.severity, first.subject) == ("ACC001", "critical", truth["op_name"])
    assert [f.subject for f in report.findings if f.code == "ACC001"] == [truth["op_name"]]
    assert set(first.details["downstream"].split(", ")) - {"none"} <= set(truth["downstream"])
    assert first.details["verdict"] == truth["verdict"]


def test_native_and_npy_of_the_same_tensors_give_identical_rows(tmp_path):
    generate(tmp_path, 4105, "tile", 8, 16, stream_names=True)
    rows = []
    for dump in ("native", "npy"):
        con = connect()
        compare_folders(tmp_path / "dump" / dump, tmp_path / "reference" / "native", con)
        rows.append(
            con.execute(
                "SELECT * EXCLUDE (run_id, dump_file, reference_file) FROM tensor_compare ORDER BY ALL"
            ).fetchall()
        )
        rows.append(con.execute("SELECT * EXCLUDE (run_id) FROM error_locations ORDER BY ALL").fetchall())
    assert rows[0] == rows[2] and rows[1] == rows[3]
    assert len(rows[0]) == 19


def test_every_metric_of_a_generated_set_equals_a_float64_recomputation(tmp_path):
    generate(tmp_path, 4106, "overflow", 8, 16, target="conv2")
    con = connect()
    compare_folders(tmp_path / "dump" / "npy", tmp_path / "reference" / "npy", con)
    cursor = con.execute("SELECT * FROM tensor_compare ORDER BY exec_order, slot, slot_index")
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
    assert len(rows) == 19 and sum(r["dump_inf_count"] for r in rows) > 0
    for row in rows:
        x = np.load(tmp_path / "dump" / "npy" / row["dump_file"])
        y = np.load(tmp_path / "reference" / "npy" / row["reference_file"])
        for name, value in _float64_metrics(x, y).items():
            assert math.isclose(row[name], value, rel_tol=1e-6, abs_tol=1e-300), (row["op_name"], name)


def _located(x: np.ndarray, y: np.ndarray, fmt: str = "ND"):
    from analyzer.accuracy.error_map import error_map
    from analyzer.accuracy.verdict import few_count, judge

    dump = TensorSource("op", "T", "output", 0, Path("mem"), 0, x.dtype, x.dtype.name, fmt, x.shape, (), "npy", (),
                        loaded=x)  # fmt: skip
    m = error_map(Pair(dump, _source(y), 0, 0), few_count(x.size))
    return m, judge(m)


@pytest.mark.slow
def test_error_map_verdicts_on_nhwc_channels_map_borders_and_a_binned_map():
    rng = np.random.default_rng(11)
    y = rng.standard_normal((2, 12, 12, 6)).astype(np.float32)  # NHWC
    x = y.copy()
    x[..., 4] += 3.0
    assert _located(x, y, "NHWC")[1].hot_channels == (4,)
    y = rng.standard_normal((1, 3, 20, 20)).astype(np.float32)
    x = y.copy()
    x[..., 0, :] += 1.0
    x[..., :, -1] += 1.0
    verdict = _located(x, y)[1]
    assert (verdict.verdict, verdict.tile_period) == ("edges", None) and "borders" in verdict.detail
    y = rng.standard_normal(3_000_000).astype(np.float32)  # one 1 x 3,000,000 map: binned to 1 x 512
    m, verdict = _located(y * 1.5, y)
    assert m.heat.shape == (1, 512) and not m.exact and verdict.verdict == "spread"


def test_metrics_are_the_same_to_the_bit_on_any_number_of_threads(monkeypatch):
    # A pair's sums add up chunk by chunk: threads sharing the interpreter took chunks 8 times larger than one thread
    # did, and the last digits of every metric changed with the machine's cores.
    monkeypatch.setattr(compare, "BLOCK_ELEMENTS", 1 << 14)  # several blocks a pair, several chunks a block
    monkeypatch.setattr(compare, "CHUNK_ELEMENTS", 1 << 10)
    rng = np.random.default_rng(7)
    pairs = []
    for n in (100_003, 70_001):
        y = rng.standard_normal(n).astype(np.float32)
        x = (y * (1 + 0.01 * rng.standard_normal(n))).astype(np.float16)
        pairs.append(Pair(_source(x), _source(y), 0, 0))
    alone = compare.compare_pairs(pairs, threads=1)
    assert compare.compare_pairs(pairs, threads=2) == alone
    assert compare.compare_pairs(pairs, threads=3) == alone
