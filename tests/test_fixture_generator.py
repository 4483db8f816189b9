"""The fixture generator: deterministic bytes, the bundled example, slicing, byte habits and the CLI."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from fixtures.generator import SCENARIOS, truth, write_export
from fixtures.generator.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "fixtures" / "examples" / "resnet_host_sync"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_write_export_same_seed_identical_bytes(tmp_path: Path) -> None:
    write_export("gappy_multistream", tmp_path / "a", layout="msprof")
    write_export("gappy_multistream", tmp_path / "b", layout="msprof")
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


@pytest.mark.parametrize(
    ("folder", "scenario"),
    [("resnet_host_sync", "host_sync_low_util"), ("cann_upgrade", "regression_pair"), ("batch_sweep", "batch_sweep")],
)
def test_bundled_example_regenerates_identical_bytes(tmp_path: Path, folder: str, scenario: str) -> None:
    assert main([scenario, str(tmp_path)]) == 0
    expected = {k: v for k, v in _files(EXAMPLE.parent / folder).items() if k != "README.md"}
    assert _files(tmp_path) == expected


def test_kernel_details_byte_habits_match_real_files(tmp_path: Path) -> None:
    (root,) = write_export("comm_not_overlapped", tmp_path, devices=1)
    data = (root / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").read_bytes()
    header, first = data.split(b"\r\n")[:2]
    assert header.startswith(b"Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,")
    assert b"\t," in first and b',"""' in first and first.split(b",")[1] == b"4294967295"
    assert b"HCCL" in data and b",N/A,N/A," in data
    assert data.count(b"\r\n") == data.count(b"\n")


def test_real_kernel_details_header_matches(real_dir: Path, tmp_path: Path) -> None:
    real = real_dir / "torch_npu_level1_rank0_text" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    (root,) = write_export("healthy", tmp_path)
    ours = (root / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").read_bytes()
    assert ours.split(b"\r\n")[0] == real.read_bytes().split(b"\r\n")[0]


def test_msprof_small_slice_rows_writes_slices(tmp_path: Path) -> None:
    (root,) = write_export("healthy", tmp_path, layout="msprof", slice_rows=30)
    out = root / "mindstudio_profiler_output"
    slices = sorted(p.name for p in out.glob("op_summary_slice_*_*.csv"))
    assert len(slices) == 3 and not list(out.glob("op_summary_2*.csv"))
    assert list(out.glob("msprof_slice_0_*.json")) and (root / "device_0" / "info.json.0").is_file()


def test_host_sync_scenario_busy_below_30_percent() -> None:
    (run,) = truth("host_sync_low_util")
    busy = run.steps["computing_us"].sum() / run.steps["stage_us"].sum()
    assert busy < 0.30
    syncs = run.host_events.filter(pl.col("name").is_in(["AscendCL@aclrtSynchronizeStream", "AscendCL@aclrtMemcpy"]))
    assert syncs.height == 48


def test_batch_sweep_utilisation_rises_with_batch_size() -> None:
    runs = truth("batch_sweep", steps=2)
    busy = [r.steps["computing_us"].sum() / r.steps["stage_us"].sum() for r in runs]
    assert [r.info.batch_size for r in runs] == [1, 2, 4, 8, 16]
    assert busy == sorted(busy)


def test_regression_pair_matmul_slower_and_transdata_new() -> None:
    before, after, rerun = truth("regression_pair")
    mean = lambda r: r.ops.filter(pl.col("op_type") == "MatMulV2")["dur_us"].mean()  # noqa: E731
    assert 1.20 < mean(after) / mean(before) < 1.30 and 0.97 < mean(rerun) / mean(before) < 1.03
    trans = lambda r: r.ops.filter(pl.col("op_type") == "TransData").height  # noqa: E731
    assert (
        trans(before) == 0
        and trans(after) > 0
        and (before.info.cann_version, after.info.cann_version) == ("8.0.RC3", "8.1.RC1")
    )


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_truth_start_ns_exact_int64(scenario: str) -> None:
    params = {"tasks": 2000} if scenario == "large" else {}
    for run in truth(scenario, **params):
        assert run.ops.schema["start_ns"] == pl.Int64 and run.ops["start_ns"].null_count() == 0


def test_cli_unknown_scenario_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["no_such_scenario", str(tmp_path)])
    assert exc.value.code == 2


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["memory_leak", "--steps", "3"], "--steps"),
        (["healthy", "--ranks", "4", "--tasks", "9"], "--tasks, --ranks"),
        (["job_slow_rank", "--layout", "msprof"], "--layout"),
    ],
)
def test_cli_refuses_an_option_its_scenario_does_not_take(tmp_path, capsys, argv: list[str], named: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main([argv[0], str(tmp_path / "out"), *argv[1:]])
    assert exc.value.code == 2 and not (tmp_path / "out").exists()
    error = capsys.readouterr().err
    assert error.startswith("usage: ") and f"error: {named}: not an option of the scenario {argv[0]!r}" in error


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--scale", "0", "must be at least 1, not 0"),
        ("--slice-rows", "0", "must be at least 1, not 0"),
        ("--steps", "-2", "must be at least 1, not -2"),
        ("--scale", "two", "expected a whole number, not 'two'"),
    ],
)
def test_cli_refuses_a_count_below_one_instead_of_taking_the_default(tmp_path, capsys, option, value, said) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["comm_not_overlapped", str(tmp_path / "out"), option, value])
    assert exc.value.code == 2 and not (tmp_path / "out").exists()
    error = capsys.readouterr().err
    assert error.startswith("usage: ") and f"error: argument {option}: {said}" in error


def test_mte_bound_conv_conv_dominant_with_mte_share_near_70_percent() -> None:
    (run,) = truth("mte_bound_conv")
    by_type = run.ops.group_by("op_type").agg(pl.col("dur_us").sum()).sort("dur_us", descending=True)
    conv = run.ops.filter(pl.col("op_type") == "Conv2D")
    share = conv["aic_mte2_time_us"].sum() / conv["aicore_time_us"].sum()
    assert by_type["op_type"][0] == "Conv2D" and 0.65 < share < 0.75


def test_call_count_hotspot_tiny_ops_rank_first() -> None:
    (run,) = truth("call_count_hotspot")
    tiny = run.ops.filter(pl.col("op_type").is_in(["Add", "Mul", "Cast"]))
    matmul = run.ops.filter(pl.col("op_type") == "MatMulV2")
    assert tiny.height >= 2000 and tiny["dur_us"].max() < 5 and tiny["dur_us"].sum() > matmul["dur_us"].sum()
