"""The float32 kernel: exact half conversion, metrics within 1e-6 of float64, and what it hands to float64."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analyzer.accuracy import compare
from analyzer.accuracy.fast_chunk import COSINE_BOUND, HALF_BEYOND, _to_float32, cosine_bound, fast_partial
from analyzer.accuracy.metrics import chunk_partial, exact_partial, metrics, workspace
from analyzer.accuracy.pairing import Pair
from tests.test_accuracy_compare import _float64_metrics, _source


def test_every_finite_half_converts_exactly_and_every_other_lands_beyond_the_finite_range():
    halves = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    got = _to_float32(halves, np.empty(halves.size, np.float32)).copy()
    finite = np.isfinite(halves)
    assert np.array_equal(got[finite].view(np.uint32), halves[finite].astype(np.float32).view(np.uint32))
    assert (np.abs(got[~finite]) >= HALF_BEYOND).all() and (~finite).sum() == 2 * 1024


def _pair(x: np.ndarray, y: np.ndarray) -> dict:
    [got] = compare.compare_pairs([Pair(_source(x), _source(y), 0, 0)], threads=2)
    return got


def _close_to_float64(got: dict, x: np.ndarray, y: np.ndarray) -> None:
    for name, value in _float64_metrics(x, y).items():
        assert math.isclose(got[name], value, rel_tol=1e-6, abs_tol=1e-300), name


def _cases(seed: int):
    import ml_dtypes  # imported where it is needed, not by every collection of the tests

    rng = np.random.default_rng(seed)
    y = (rng.standard_normal(70_001) * 10.0 ** rng.uniform(-3, 3, 70_001)).astype(np.float32)
    y[rng.integers(0, y.size, 500)] = 0.0  # |y| <= 1e-6: left out of the relative error
    drift = 1 + 1e-3 * rng.standard_normal(y.size)
    yield "float16", (y * drift).astype(np.float16), y
    yield "bfloat16", (y * drift).astype(ml_dtypes.bfloat16), y
    yield "float32 scaled", (y * 1.2).astype(np.float32), y
    yield "float16 against float16", y.astype(np.float16), (y * drift).astype(np.float16)
    yield "equal", y.copy(), y


@pytest.mark.slow
@pytest.mark.parametrize("seed", [7, 8])
def test_the_float32_kernel_takes_the_chunks_and_every_metric_equals_float64(monkeypatch, seed):
    monkeypatch.setattr(compare, "CHUNK_ELEMENTS", 8_000)  # several chunks, and a tail that is not 8 wide
    for name, x, y in _cases(seed):
        p = chunk_partial(x, y)
        assert p.fast_count == x.size - x.size % 8, name
        got = _pair(x, y)
        _close_to_float64(got, x, y)
        assert got["rel_euclidean"] == 0 or name != "equal"


def test_what_float32_cannot_bound_goes_to_float64():
    rng = np.random.default_rng(3)
    ws = workspace(4096)
    tiny = (rng.standard_normal(4096) * 1e-30).astype(np.float32)  # squares underflow float32
    assert fast_partial(tiny, tiny * np.float32(1.01), ws) is None
    halves = rng.standard_normal(4096).astype(np.float16)
    halves[17] = np.inf
    assert fast_partial(halves, halves.astype(np.float32), ws) is None
    assert chunk_partial(halves, halves.astype(np.float32)).dump_inf == 1
    near = tiny * np.float32(1.01)
    assert _pair(tiny, near) == metrics(exact_partial(tiny, near, ws))


def test_a_cosine_far_from_one_is_summed_again_in_float64():
    rng = np.random.default_rng(5)
    y = rng.standard_normal(50_000).astype(np.float32)
    x = (0.05 * y + rng.standard_normal(y.size)).astype(np.float16)  # cosine about 0.05
    fast = chunk_partial(x, y)
    assert fast.fast_count and cosine_bound(fast) > COSINE_BOUND
    got = _pair(x, y)
    assert got["cosine"] == metrics(exact_partial(x, y, workspace(x.size)))["cosine"]
    _close_to_float64(got, x, y)


def test_a_large_comparison_shares_its_blocks_with_a_worker_process_and_gets_the_same_sums(monkeypatch, tmp_path):
    import resource

    from analyzer.accuracy.pairing import pair_tensors
    from analyzer.accuracy.read.folder import read_folder

    rng = np.random.default_rng(9)
    y = rng.standard_normal(600_000).astype(np.float32)
    for side, array in (("dump", y.astype(np.float16)), ("ref", y)):
        (tmp_path / side).mkdir()
        np.save(tmp_path / side / "MatMul_output_0.npy", array)
    pairs, _ = pair_tensors(read_folder(tmp_path / "dump").tensors, read_folder(tmp_path / "ref").tensors)
    monkeypatch.setattr(compare, "BLOCK_ELEMENTS", 100_000)
    alone = compare.compare_pairs(pairs, threads=1)
    monkeypatch.setattr(compare, "PROCESS_MIN_ELEMENTS", 1)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert compare.compare_pairs(pairs, threads=2) == alone
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert after.ru_utime + after.ru_stime > before.ru_utime + before.ru_stime  # a worker process did its part


def test_a_device_format_tensor_is_read_and_converted_once_per_pass_not_once_per_block(monkeypatch, tmp_path):
    from analyzer.accuracy.read.tensor_source import TensorSource
    from fixtures.dumps.layouts import to_nc1hwc0

    x = np.random.default_rng(4).standard_normal((2, 19, 5, 3)).astype(np.float16)
    stored = to_nc1hwc0(x)
    (tmp_path / "conv").write_bytes(stored.tobytes())
    dump = TensorSource("conv", "Conv2D", "output", 0, tmp_path / "conv", 0, x.dtype, "float16", "NC1HWC0",
                        stored.shape, x.shape, "native")  # fmt: skip
    calls = []
    whole = TensorSource.whole
    monkeypatch.setattr(TensorSource, "whole", lambda self: calls.append(1) or whole(self))
    monkeypatch.setattr(compare, "BLOCK_ELEMENTS", 100)  # six blocks of a plain tensor this size
    y = x.astype(np.float32) * np.float32(1.001)
    [got] = compare.compare_pairs([Pair(dump, _source(y), 0, 0)], threads=2)
    assert len(calls) == 1
    _close_to_float64(got, x, y)
    from analyzer.accuracy import error_map

    monkeypatch.setattr(error_map, "BLOCK_ELEMENTS", 100)  # the error map's pass, the same
    calls.clear()
    assert error_map.error_map(Pair(dump, _source(y), 0, 0), 8).element_count == x.size and len(calls) == 1
