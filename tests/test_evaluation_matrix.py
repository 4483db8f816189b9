"""The evaluation matrix: its ground truth agrees with the generated runs, and every run writes a readable export."""

from __future__ import annotations

import functools
from pathlib import Path

import polars as pl
import pytest

from analyzer.ingest import load_export
from analyzer.ingest.loader import usable_run_ids
from fixtures.evaluate.scoring import subject_matches
from fixtures.generator import LAYOUTS
from fixtures.generator.ground_truth import load_ground_truth
from fixtures.generator.matrix import HEALTHY, MODELS, Cell, cell_truth, matrix_cells, write_cell
from fixtures.generator.model import Truth
from fixtures.generator.problems import PROBLEMS

TRUTH = load_ground_truth()
PAIRS = [(p, m) for p in TRUTH.problems for m in TRUTH.models]
EDGE_SIZES = (1, 64)
SEEDS = (0, 5)  # the seed draws depth and strength: the properties must hold whatever it draws


@functools.cache  # several properties read the same cell's run; a Truth's frames are never changed
def _run(problem: str, model: str, batch: int, seed: int = 0) -> Truth:
    (run,) = cell_truth(Cell(problem, model, batch, "torch_npu"), seed)
    return run


def _busy_share(run: Truth) -> float:
    """Union of compute intervals over the ops' span, on device 0."""
    ops = run.ops.filter((pl.col("device_id") == 0) & (pl.col("task_type") != "HCCL")).sort("start_ns")
    end = pl.col("start_ns") + (pl.col("dur_us") * 1000).cast(pl.Int64)
    ops = ops.with_columns(end_ns=end)
    span = ops["end_ns"].max() - ops["start_ns"].min()
    # ops of one stream do not overlap in the matrix's programs, so their durations add up
    return float(ops["dur_us"].sum() * 1000 / span)


def test_matrix_axes_name_the_generator_problems_models_and_layouts() -> None:
    assert set(TRUTH.problems) == set(PROBLEMS)
    assert set(TRUTH.models) == set(MODELS)
    assert set(TRUTH.layouts) <= set(LAYOUTS) and len(TRUTH.layouts) == 2
    assert len(TRUTH.sizes) >= 3 and min(TRUTH.healthy_sizes) == 1 and max(TRUTH.healthy_sizes) == 64


@pytest.mark.parametrize(("problem", "model"), PAIRS, ids=[f"{p}/{m}" for p, m in PAIRS])
def test_ground_truth_entry_is_complete(problem: str, model: str) -> None:
    exp = TRUTH.expectation(problem, model)
    if problem == HEALTHY:
        assert exp.expect == () and not exp.first
    else:
        assert exp.expect, "an injected problem names the rules that report it"
        assert not set(exp.tolerate) & set(exp.expect)


@pytest.mark.parametrize(("problem", "model"), PAIRS, ids=[f"{p}/{m}" for p, m in PAIRS])
def test_expected_subject_names_something_the_run_holds(problem: str, model: str) -> None:
    words = TRUTH.expectation(problem, model).subject
    run = _run(problem, model, 16)
    names = [f"{t} {s}" for t, s in run.ops.select("op_type", pl.col("input_shapes").fill_null("")).unique().rows()]
    names += [f"stream {s}" for s in run.device_tasks["stream_id"].drop_nulls().unique().to_list()]
    assert any(subject_matches(n, words) for n in names), f"no op or stream of the run matches {words}"


# problem -> the op names of the family it injects (what the expected subject must single out)
INJECTED_FAMILY = {"mte_family": ("conv1/Conv2D", "o_proj/MatMulV3"), "call_count_hotspot": ("optim/Mul", "optim/Add")}


@pytest.mark.parametrize("problem", sorted(INJECTED_FAMILY))
@pytest.mark.parametrize("model", list(MODELS))
def test_expected_subject_singles_out_the_injected_family(problem: str, model: str) -> None:
    words = TRUTH.expectation(problem, model).subject
    families = _run(problem, model, 16).ops.select("op_type", "input_shapes", "op_name").unique()
    injected = families["op_name"].str.contains("|".join(INJECTED_FAMILY[problem]))
    matched = [subject_matches(f"{t} [{s}]", words) for t, s in families.select("op_type", "input_shapes").rows()]
    assert matched == injected.to_list()


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("batch", EDGE_SIZES)
@pytest.mark.parametrize("seed", SEEDS)
def test_mte_family_is_a_minority_of_its_type_and_the_main_cost(model: str, batch: int, seed: int) -> None:
    ops = _run("mte_family", model, batch, seed).ops.filter(pl.col("task_type") != "HCCL")
    words = TRUTH.expectation("mte_family", model).subject
    fam = ops.filter(
        pl.concat_str("op_type", pl.lit(" "), "input_shapes").map_elements(
            lambda s: subject_matches(s, words), return_dtype=pl.Boolean
        )
    )
    same_type = ops.filter(pl.col("op_type") == fam["op_type"][0])
    assert fam["dur_us"].sum() < 0.6 * same_type["dur_us"].sum()
    assert fam["dur_us"].sum() > 0.25 * ops["dur_us"].sum()
    assert fam["aic_mte2_ratio"].mean() > 0.6 and fam["aic_mac_ratio"].mean() < 0.3


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("batch", EDGE_SIZES)
@pytest.mark.parametrize("seed", SEEDS)
def test_host_launch_bound_idles_in_short_gaps(model: str, batch: int, seed: int) -> None:
    run = _run("host_launch_bound", model, batch, seed)
    inside_steps = run.ops.sort("start_ns").filter(pl.col("step_id").is_first_distinct().not_())
    assert inside_steps["wait_us"].max() < 100.0
    assert 0.35 < 1 - _busy_share(run) < 0.6


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("batch", EDGE_SIZES)
@pytest.mark.parametrize("seed", SEEDS)
def test_host_sync_low_util_is_under_a_third_busy_and_healthy_is_busy(model: str, batch: int, seed: int) -> None:
    assert _busy_share(_run("host_sync_low_util", model, batch, seed)) < 0.25
    assert _busy_share(_run(HEALTHY, model, batch, seed)) > 0.85


def _share_of_op_time(run: Truth, where: pl.Expr) -> float:
    ops = run.ops.filter(pl.col("device_id") == 0)
    return float(ops.filter(where)["dur_us"].sum() / ops["dur_us"].sum())


def _span_us(run: Truth) -> float:
    ops = run.ops.filter(pl.col("device_id") == 0)
    return float((ops["start_ns"].max() - ops["start_ns"].min()) / 1000 + ops.sort("start_ns")["dur_us"][-1])


# problem -> (its cost in a run as a share, the least share that makes it the run's main cost)
MAIN_COST = {
    "call_count_hotspot": (lambda r: _share_of_op_time(r, pl.col("op_name").str.starts_with("optim")), 0.4),
    "format_conversions": (lambda r: _share_of_op_time(r, pl.col("op_type").is_in(["TransData", "Cast"])), 0.15),
    "aicpu_operators": (lambda r: _share_of_op_time(r, pl.col("task_type") == "AI_CPU"), 0.25),
    "comm_not_overlapped": (lambda r: _share_of_op_time(r, pl.col("task_type") == "HCCL"), 0.3),
    "cross_stream_waits": (
        lambda r: r.device_tasks.filter(pl.col("task_type") == "EVENT_WAIT")["dur_us"].sum() / _span_us(r),
        0.25,
    ),
}


@pytest.mark.parametrize("problem", sorted(MAIN_COST))
@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("batch", EDGE_SIZES)
def test_injected_problem_is_the_main_cost_where_the_truth_says_first(problem: str, model: str, batch: int) -> None:
    assert TRUTH.expectation(problem, model).first
    measure, least = MAIN_COST[problem]
    assert measure(_run(problem, model, batch)) > least


def test_frequency_drop_lowers_the_clock_for_most_of_the_run() -> None:
    freq = _run("frequency_drop", "cnn", 16).counters.filter(pl.col("counter") == "aicore_freq")
    assert freq["value"].min() < 0.7 * freq["value"].max()


def test_cross_stream_waits_block_stream_three() -> None:
    tasks = _run("cross_stream_waits", "llm", 16).device_tasks
    assert tasks.filter((pl.col("task_type") == "EVENT_WAIT") & (pl.col("stream_id") == 3)).height > 0


def test_matrix_cell_same_seed_same_truth_other_seed_other_truth() -> None:
    cell = Cell("mte_family", "llm", 16, "msprof")
    a, b, c = cell_truth(cell, 1)[0], cell_truth(cell, 1)[0], cell_truth(cell, 2)[0]
    assert a.ops.equals(b.ops)
    assert not a.ops.equals(c.ops)


def _check_cell_export(cell: Cell, tmp_path: Path) -> None:
    runs = cell_truth(cell, 0)
    (run,) = runs
    roots = write_cell(cell, tmp_path / cell.id, 0, runs)
    read = 0
    for root in roots:
        ingested = load_export(root)
        assert not [p for p in ingested.problems if p.severity == "error"], ingested.problems
        usable = usable_run_ids(ingested.con, ingested.run_ids)
        read += ingested.con.execute("SELECT count(*) FROM ops WHERE run_id IN ?", [usable]).fetchone()[0]
        ingested.con.close()
    assert read == run.ops.height


# one cell per problem at one size, model and layout turning so that both models meet both layouts
FAST = [
    c
    for c in matrix_cells(TRUTH, (4,))
    if TRUTH.models.index(c.model) == TRUTH.problems.index(c.problem) % 2
    and TRUTH.layouts.index(c.layout) == TRUTH.problems.index(c.problem) // 2 % 2
]


@pytest.mark.slow
@pytest.mark.parametrize("cell", FAST, ids=[c.id for c in FAST])
def test_matrix_cell_writes_an_export_that_reads_back(cell: Cell, tmp_path: Path) -> None:
    _check_cell_export(cell, tmp_path)


def _turn(cell: Cell, batches: list[int]) -> int:
    """0 or 1, turning with the cell's model and with its batch size's place in ``batches``."""
    return (TRUTH.models.index(cell.model) + batches.index(cell.batch)) % 2


def _one_layout_per_run(cells: list[Cell]) -> list[Cell]:
    """Each run of the matrix in one layout, FAST's runs in FAST's layout: both layouts of a cell hold
    the same run (cell_truth), so a run's content is read back once. The layout turns with model and
    batch size, so that every problem meets both layouts with each model and at each batch size."""
    chosen = []
    for problem in TRUTH.problems:
        mine = [c for c in cells if c.problem == problem]
        batches = sorted({c.batch for c in mine})
        fast = next(c for c in FAST if c.problem == problem)
        offset = (TRUTH.layouts.index(fast.layout) - _turn(fast, batches)) % 2
        chosen += [c for c in mine if TRUTH.layouts.index(c.layout) == (_turn(c, batches) + offset) % 2]
    return chosen


# the other runs: with FAST, every run of the matrix read back once, in one of its layouts
OTHERS = [c for c in _one_layout_per_run(matrix_cells(TRUTH)) if c not in FAST]


@pytest.fixture(scope="module")
def others_read_together(tmp_path_factory) -> dict[str, tuple[int, int, list[str]]]:
    """Every other run's export written under one tree and read by one ``load_export``, the exports read
    together as a batch's chunk reads them (FAST's cells are read alone): per cell, the ops of its run, the
    ops read of its usable runs and its error problems (an error naming no cell's folder counts for every cell).
    Read alone, each export would pay again for a connection and a read of each of its files."""
    tree = tmp_path_factory.mktemp("matrix_others")
    expected = {}
    for i, cell in enumerate(OTHERS):
        runs = cell_truth(cell, 0)
        (run,) = runs
        expected[cell.id] = (f"cell{i:03d}", run.ops.height)
        write_cell(cell, tree / f"cell{i:03d}", 0, runs)
    ingested = load_export(tree)
    try:
        usable = usable_run_ids(ingested.con, ingested.run_ids)
        read = dict(
            ingested.con.execute(
                "SELECT split_part(source_path, '/', 1), count(*) FROM ops JOIN runs USING (run_id)"
                " WHERE run_id IN ? GROUP BY ALL",
                [usable],
            ).fetchall()
        )
    finally:
        ingested.con.close()
    errors = [p for p in ingested.problems if p.severity == "error"]
    return {
        cell_id: (
            height,
            read.get(folder, 0),
            [p.line() for p in errors if p.file.startswith(f"{folder}/") or not p.file.startswith("cell")],
        )
        for cell_id, (folder, height) in expected.items()
    }


@pytest.mark.slow
@pytest.mark.parametrize("cell", OTHERS, ids=lambda c: c.id)
def test_every_other_matrix_run_writes_an_export_that_reads_back(cell: Cell, others_read_together) -> None:
    height, read, errors = others_read_together[cell.id]
    assert not errors, errors
    assert read == height


def test_the_other_runs_cover_every_run_and_each_problem_meets_both_layouts_per_model_and_batch() -> None:
    runs = {(c.problem, c.model, c.batch) for c in matrix_cells(TRUTH)}
    checked = [*FAST, *OTHERS]
    assert {(c.problem, c.model, c.batch) for c in checked} == runs and len(checked) == len(runs)
    for problem in TRUTH.problems:
        mine = [c for c in checked if c.problem == problem]
        assert {(c.model, c.layout) for c in mine} == {(m, lay) for m in TRUTH.models for lay in TRUTH.layouts}
        assert all({c.layout for c in mine if c.batch == b} == set(TRUTH.layouts) for b in {c.batch for c in mine})
