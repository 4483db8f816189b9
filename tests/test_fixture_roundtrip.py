"""Generated exports read back to exactly the truth the generator meant to write (issue 2, point 7)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from analyzer.ingest.loader import load_export
from analyzer.ingest.readers import READERS
from fixtures.generator import OPS_COLUMNS, SCENARIOS, expected_ops, export_units, truth, write_export

SMALL = {
    "call_count_hotspot": {"tiny_per_step": 200},
    "large": {"tasks": 3000},
    "batch_sweep": {"steps": 2},
    "regression_pair": {"steps": 3},
}
COMPARED = [c for c in OPS_COLUMNS if c != "hf32_eligible"] + ["hf32_eligible"]


def _read_ops(con, run_ids: list[str]) -> pl.DataFrame:
    placeholders = ", ".join("?" for _ in run_ids)
    rows = con.sql(f"SELECT * FROM ops WHERE run_id IN ({placeholders})", params=run_ids)
    return pl.from_arrow(rows.to_arrow_table())


def _sorted(df: pl.DataFrame) -> pl.DataFrame:
    return df.select(COMPARED).sort("device_id", "start_ns", "op_name", "task_id", nulls_last=True)


def _check_steps(con, run_ids: list[str], run, layout: str) -> None:
    """step_trace_time.csv (torch_npu only) gives each step's decomposition, once its reader exists."""
    if "step_trace_time" not in READERS or layout != "torch_npu":
        return
    got = pl.from_arrow(
        con.sql(
            "SELECT step_id, computing_us, free_us, comm_not_overlapped_us FROM steps "
            "WHERE run_id = ? AND source = 'step_trace_time' ORDER BY step_id",
            params=[run_ids[0]],
        ).to_arrow_table()
    )
    exp = run.steps.select("step_id", "computing_us", "free_us", "comm_not_overlapped_us").sort("step_id")
    assert_frame_equal(got, exp, check_dtypes=False)


def _check_timeline(con, run_ids: list[str], run) -> None:
    """Every device task of the first device is on the timeline (task_time may repeat them: count distinct)."""
    if "timeline" not in READERS:
        return
    n = con.execute(
        "SELECT count(DISTINCT (stream_id, task_id, start_ns)) FROM timeline WHERE run_id = ? AND kind = 'device_task'",
        [run_ids[0]],
    ).fetchone()[0]
    assert n == run.device_tasks.filter(pl.col("device_id") == run.device_ids()[0]).height


LAYOUTS = ("torch_npu", "msprof")


@pytest.fixture(scope="module")
def every_scenario_read(tmp_path_factory):
    """Every scenario's export in both layouts written under one tree and read by one ``load_export``, the
    exports read together as a batch's chunk reads them (each export read alone gives the same tables:
    test_ingest_together.py): the connection, and per (scenario, layout) the roots written. Read alone,
    each export would pay again for a connection and a read of each of its files."""
    tree = tmp_path_factory.mktemp("roundtrip")
    roots = {
        (scenario, layout): write_export(
            scenario, tree / f"{scenario}-{layout}", layout=layout, slice_rows=500, **SMALL.get(scenario, {})
        )
        for scenario in sorted(SCENARIOS)
        for layout in LAYOUTS
    }
    ingested = load_export(tree)
    yield tree, ingested, roots
    ingested.con.close()


@pytest.mark.slow
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_fixture_roundtrip_ops_equal_truth(scenario: str, layout: str, every_scenario_read) -> None:
    tree, ingested, roots = every_scenario_read
    units = export_units(truth(scenario, **SMALL.get(scenario, {})), layout)
    assert len(roots[scenario, layout]) == len(units)
    for root, (run, _device) in zip(roots[scenario, layout], units, strict=True):
        rel = root.relative_to(tree).as_posix()
        errors = [p.line() for p in ingested.problems if p.severity == "error" and p.file.startswith(f"{rel}/")]
        assert not errors, errors
        run_ids = [
            r[0]
            for r in ingested.con.execute(
                "SELECT run_id FROM runs WHERE source_path = ? ORDER BY run_id", [rel]
            ).fetchall()
        ]
        got = _read_ops(ingested.con, run_ids)
        assert_frame_equal(_sorted(got), _sorted(expected_ops(run, layout)), check_dtypes=False, check_exact=True)
        _check_steps(ingested.con, run_ids, run, layout)
        _check_timeline(ingested.con, run_ids, run)


@pytest.mark.slow
def test_fixture_roundtrip_read_of_every_scenario_has_no_error_outside_an_export(every_scenario_read) -> None:
    _tree, ingested, roots = every_scenario_read
    folders = tuple(f"{scenario}-{layout}/" for scenario, layout in roots)
    assert not [p.line() for p in ingested.problems if p.severity == "error" and not p.file.startswith(folders)]


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["torch_npu", pytest.param("msprof", marks=pytest.mark.slow)])
@pytest.mark.parametrize("scenario", ["comm_not_overlapped", "gappy_multistream", "host_sync_low_util"])
def test_fixture_roundtrip_db_ops_equal_truth(scenario: str, layout: str, tmp_path: Path) -> None:
    """DB form: same ops; PMU times go through ns in TASK_PMU_INFO, so floats compare to 1e-9 relative."""
    (root, *_) = write_export(scenario, tmp_path, layout=layout, export_type="db")
    (run, _device) = export_units(truth(scenario), layout)[0]
    ingested = load_export(root)
    assert not [p for p in ingested.problems if p.severity == "error"], [p.line() for p in ingested.problems]
    got = _read_ops(ingested.con, ingested.run_ids)
    expected = expected_ops(run.for_device(run.device_ids()[0]), layout, export_type="db")
    assert_frame_equal(_sorted(got), _sorted(expected), check_dtypes=False, rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.slow
def test_fixture_roundtrip_torch_metadata_recorded(tmp_path: Path) -> None:
    roots = write_export("regression_pair", tmp_path, steps=2)
    runs = {
        r[0]: r
        for r in (
            load_export(root)
            .con.execute(
                "SELECT cann_version, torch_npu_version, model_name, batch_size, profiler_level, aic_metrics FROM runs"
            )
            .fetchone()
            for root in roots
        )
    }
    assert set(runs) == {"8.0.RC3", "8.1.RC1"}
    assert runs["8.1.RC1"][2:] == ("bert_base", 8, "Level1", "PipeUtilization")


@pytest.mark.slow
def test_fixture_roundtrip_msprof_multidevice_one_run_per_device(tmp_path: Path) -> None:
    (root,) = write_export("comm_not_overlapped", tmp_path, layout="msprof", devices=2)
    ingested = load_export(root)
    rows = ingested.con.execute("SELECT device_id, chip, ai_core_count FROM runs ORDER BY device_id").fetchall()
    assert rows == [(0, "Ascend910B", 24), (1, "Ascend910B", 24)]
