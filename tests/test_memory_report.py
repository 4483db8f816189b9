"""Memory and bandwidth: the peak and who holds it, on generated and real exports, recomputed here with
plain csv / sqlite3; the memory rules on generated problems and healthy runs; the shared time axis."""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

import polars as pl
import pytest

import analyzer
from analyzer.report import memory_charts, memory_series
from analyzer.report.html import build_figures, render_html
from analyzer.rule_engine.views import create_views
from fixtures.evaluate.diagnosed import Seen, diagnose_tree_by_folder
from fixtures.generator.matrix import Cell, cell_truth, write_cell
from tests.plotly_view import validated, validated_all

MEMORY_RULES = {"memory-near-device-limit", "memory-fragmentation", "memory-leak-across-steps"}
MEMORY_RULES |= {"hbm-bandwidth-low-mte-busy", "hbm-bandwidth-saturated"}
# problem -> the rule that must name it first among the memory findings (seeds the rules were not tuned on)
INJECTED = {
    "near_oom": "memory-near-device-limit",
    "memory_fragmentation": "memory-fragmentation",
    "memory_leak": "memory-leak-across-steps",
    "hbm_saturated": "hbm-bandwidth-saturated",
}


def _plain_peak(rows: list[dict], alloc: str, reserved: str, scale: float) -> tuple[float, float, float]:
    """(peak allocated MB, its first time, peak reserved MB) of the PTA+GE component, read as plain text."""
    total = [r for r in rows if r["Component"] == "PTA+GE" and r[alloc].strip()]
    best = max(total, key=lambda r: (float(r[alloc]), -float(r["Timestamp(us)"].strip())))
    return (
        float(best[alloc]) * scale,
        float(best["Timestamp(us)"].strip()),
        max(float(r[reserved]) for r in total) * scale,
    )


def _alive(rows: list[dict], at_us: float) -> list[tuple[str, float]]:
    """operator_memory allocations alive at ``at_us``: allocated at or before it, released after or never."""
    alive = []
    for r in rows:
        size, start, end = float(r["Size(KB)"]), float(r["Allocation Time(us)"].strip()), r["Release Time(us)"].strip()
        if size > 0 and start <= at_us and (not end or float(end) > at_us):
            alive.append((r["Name"], size))
    return sorted(alive)


def _read_csv(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _ours(root: Path) -> tuple[pl.DataFrame, list[tuple[str, float]]]:
    with analyzer.load(root) as trace:
        create_views(trace.con)
        run = trace.run_ids[0]
        held = trace.con.sql(f"SELECT op_name, size_kb FROM _memory_at_peak WHERE run_id = '{run}' ORDER BY ALL")
        return memory_series.memory_peak(trace.con, run), [tuple(r) for r in held.fetchall()]


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["torch_npu", "msprof"])
def test_memory_peak_generated_matches_the_written_files(layout: str, tmp_path: Path) -> None:
    cell = Cell("near_oom", "cnn", 4, layout)
    (root,) = write_cell(cell, tmp_path, seed=3)
    files = sorted(root.rglob("memory_record*.csv"))
    scale = 1 / 1024 if layout == "msprof" else 1.0
    unit = "KB" if layout == "msprof" else "MB"
    alloc, at_us, reserved = _plain_peak(
        _read_csv(files[0]), f"Total Allocated({unit})", f"Total Reserved({unit})", scale
    )
    peak, held = _ours(root)
    assert abs(peak["peak_allocated_mb"][0] - alloc) < 0.1 and abs(peak["peak_reserved_mb"][0] - reserved) < 0.1
    assert held == _alive(_read_csv(sorted(root.rglob("operator_memory*.csv"))[0]), at_us)
    assert peak["used_share"][0] > 0.9


@pytest.mark.parametrize("export", ["torch_npu_level1_rank0_text", "torch_npu_llm_cann83_rank0"])
def test_memory_peak_real_text_matches_plain_csv(export: str, real_dir: Path) -> None:
    out = real_dir / export / "ASCEND_PROFILER_OUTPUT"
    alloc, at_us, reserved = _plain_peak(
        _read_csv(out / "memory_record.csv"), "Total Allocated(MB)", "Total Reserved(MB)", 1.0
    )
    peak, held = _ours(real_dir / export)
    assert abs(peak["peak_allocated_mb"][0] - alloc) < 0.1 and abs(peak["peak_reserved_mb"][0] - reserved) < 0.1
    assert held == _alive(_read_csv(out / "operator_memory.csv"), at_us)


def test_memory_peak_real_db_matches_plain_sqlite(real_dir: Path) -> None:
    root = real_dir / "torch_npu_level1_rank0_db"
    # immutable: a WAL database opened read-only still gets -wal / -shm files beside it, inside the export
    db = sqlite3.connect(
        f"file:{root / 'ASCEND_PROFILER_OUTPUT' / 'ascend_pytorch_profiler_0.db'}?mode=ro&immutable=1", uri=True
    )
    try:
        (alloc, at_ns), (reserved,) = (
            db.execute(
                "SELECT m.totalAllocated, m.timestamp FROM MEMORY_RECORD m JOIN STRING_IDS s ON s.id = m.component "
                "WHERE s.value = 'PTA+GE' ORDER BY m.totalAllocated DESC, m.timestamp LIMIT 1"
            ).fetchone(),
            db.execute(
                "SELECT max(m.totalReserved) FROM MEMORY_RECORD m JOIN STRING_IDS s ON s.id = m.component "
                "WHERE s.value = 'PTA+GE'"
            ).fetchone(),
        )
        alive = db.execute(
            "SELECT s.value, o.size / 1024.0 FROM OP_MEMORY o JOIN STRING_IDS s ON s.id = o.name "
            "WHERE o.size > 0 AND o.allocationTime <= ? AND (o.releaseTime IS NULL OR o.releaseTime > ?) ORDER BY 1, 2",
            (at_ns, at_ns),
        ).fetchall()
    finally:
        db.close()
    peak, held = _ours(root)
    assert abs(peak["peak_allocated_mb"][0] - alloc / 2**20) < 0.1
    assert abs(peak["peak_reserved_mb"][0] - reserved / 2**20) < 0.1
    assert held == [tuple(r) for r in alive]


PROBLEM_LAYOUTS = (("torch_npu", "llm"), ("msprof", "cnn"))
HEALTHY_CELLS = (("torch_npu", "cnn", 1), ("msprof", "llm", 64), ("torch_npu", "llm", 16))


@pytest.fixture(scope="module")
def memory_cells_seen(tmp_path_factory) -> dict[str, tuple[Seen, ...]]:
    """Each injected memory problem in both layouts (seed 29: not a seed the rules or the generator were developed
    against) and three healthy runs (seed 17), written under one tree and diagnosed by ``diagnose_tree_by_folder``:
    each run's folder -> its ranked findings."""
    tree = tmp_path_factory.mktemp("memory_cells")
    for problem in INJECTED:
        for layout, model in PROBLEM_LAYOUTS:
            write_cell(Cell(problem, model, 16, layout), tree / f"{problem}-{layout}", 29)
    for layout, model, batch in HEALTHY_CELLS:
        write_cell(Cell("healthy", model, batch, layout), tree / f"healthy-{layout}-{model}", seed=17)
    seen = diagnose_tree_by_folder(tree, analyzer.rules())
    assert len(seen) == len(INJECTED) * len(PROBLEM_LAYOUTS) + len(HEALTHY_CELLS)
    return seen


@pytest.mark.slow  # generated exports of each problem in both layouts, diagnosed whole
@pytest.mark.parametrize("problem", sorted(INJECTED))
def test_memory_problem_named_first_among_memory_findings(problem: str, memory_cells_seen) -> None:
    for layout, _model in PROBLEM_LAYOUTS:
        seen = memory_cells_seen[f"{problem}-{layout}"]
        memory = [s for s in seen if s.code.startswith("MEM") and s.severity in ("warning", "critical")]
        assert memory and memory[0].rule == INJECTED[problem], (layout, [(s.rule, s.subject) for s in seen])


@pytest.mark.slow
def test_memory_rules_silent_on_healthy_runs(memory_cells_seen) -> None:
    for layout, model, _batch in HEALTHY_CELLS:
        seen = memory_cells_seen[f"healthy-{layout}-{model}"]
        assert not [s for s in seen if s.rule in MEMORY_RULES], [(s.rule, s.severity) for s in seen]


@pytest.mark.slow
def test_memory_timeline_panels_share_one_x_axis(tmp_path: Path) -> None:
    cell = Cell("memory_leak", "llm", 4, "torch_npu")
    (root,) = write_cell(cell, tmp_path, seed=5, runs=cell_truth(cell, 5))
    with analyzer.load(root) as trace:
        d = analyzer.diagnose(trace)
        figures = validated_all(build_figures(trace.con, d))
        page = render_html(d, trace.con)
        x_range = memory_series.page_time_range(trace.con, d.run_id)
        whole = memory_series.time_range(trace.con, d.run_id)
    layout = figures["timeline"].layout
    ranges = {tuple(layout[f"xaxis{s}"].range) for s in ("", "2", "3", "4")}
    # every time chart opens at the first task (0); samples from before it lie left of 0
    assert ranges == {x_range} and x_range == (0.0, whole[1]) and whole[0] <= 0.0
    assert all(layout[f"xaxis{s}"].matches == "x4" for s in ("", "2", "3"))
    assert tuple(figures["memory"].layout.xaxis.range) == x_range == tuple(figures["busy"].layout.xaxis.range)
    assert not layout.annotations[-1].text.startswith("not collected")  # every panel drew data
    assert 'id="memory"' in page and "Peak and who holds it" in page and "chart-timeline" in page


def test_memory_hbm_samples_at_one_instant_say_so(real_dir: Path) -> None:
    with analyzer.load(real_dir / "msprof_db_2023") as trace:
        d = analyzer.diagnose(trace)
        figures = validated_all(build_figures(trace.con, d))
    assert "at one instant" in figures["hbm"].layout.annotations[0].text
    notes = [a.text for a in figures["timeline"].layout.annotations]
    assert any("at one instant" in n for n in notes) and any("memory records" in n for n in notes)


def test_memory_chart_without_records_says_what_to_collect() -> None:
    empty = pl.DataFrame(
        schema={
            "component": pl.Utf8,
            "is_total": pl.Boolean,
            "offset_ms": pl.Float64,
            "allocated_mb": pl.Float64,
            "reserved_mb": pl.Float64,
        }
    )
    fig = validated(
        memory_charts.memory_chart(empty, pl.DataFrame(schema={"start_ms": pl.Float64, "end_ms": pl.Float64}))
    )
    assert "profile_memory=True" in fig.layout.annotations[0].text


def test_memory_roofline_real_native_names_the_group_to_collect(real_dir: Path) -> None:
    from analyzer.report.memory_section import memory_section

    groups = real_dir / "msprof_native_aic_metrics_2026"
    found = {}
    for name in ("PROF_Memory", "PROF_ArithmeticUtilization", "PROF_PipeUtilization"):
        (root,) = sorted(p for p in groups.rglob(f"{name}/PROF_*") if p.is_dir())
        with analyzer.load(root) as trace:
            create_views(trace.con)
            found[name] = memory_section(trace.con, trace.run_ids[0])
    assert "collect --aic-metrics=ArithmeticUtilization" in found["PROF_Memory"]
    assert "GroupedMatmul" in found["PROF_Memory"] and "of peak bandwidth" in found["PROF_Memory"]
    assert "collect --aic-metrics=Memory" in found["PROF_ArithmeticUtilization"]
    assert "of peak compute" in found["PROF_ArithmeticUtilization"]
    assert "--aic-metrics=Memory (main-memory bandwidth per operator)" in found["PROF_PipeUtilization"]


def test_memory_timeline_draws_sampled_utilisation_without_an_average_row() -> None:
    from analyzer.ingest.database import connect

    con = connect()
    con.execute(
        "INSERT INTO ops (run_id, op_type, task_type, start_ns, dur_us, end_ns) "
        "VALUES ('u', 'Add', 'AI_CORE', 0, 5, 5000)"
    )
    con.execute(
        "INSERT INTO counters (run_id, counter, instance, ts_ns, value, unit) VALUES "
        "('u', 'aicore_utilization', 'Core0', 0, 40, '%'), ('u', 'aicore_utilization', 'Core1', 0, 60, '%'), "
        "('u', 'aicore_utilization', 'Core0', 4000000, 10, '%'), ('u', 'aicore_freq', NULL, 0, 1800, 'MHz')"
    )
    create_views(con)
    cores = memory_series.core_activity(con, "u")
    assert cores.filter(pl.col("counter") == "aicore_utilization")["value"].to_list() == [50.0, 10.0]
    fig = memory_charts.timeline_chart(
        pl.DataFrame(),
        pl.DataFrame(schema={"counter": pl.Utf8, "offset_ms": pl.Float64, "mb_per_s": pl.Float64}),
        pl.DataFrame(),
        cores,
        pl.DataFrame(schema={"start_ms": pl.Float64, "end_ms": pl.Float64}),
        (0.0, 4.0),
    )
    assert {t.name for t in validated(fig).data if t.yaxis == "y4"} == {"AI Core MHz", "AI Core util %"}


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["torch_npu", pytest.param("msprof", marks=pytest.mark.slow)])
def test_memory_peak_generated_db_form_equals_text_form(layout: str, tmp_path: Path) -> None:
    from fixtures.generator import write_export

    (db,) = write_export("memory_leak", tmp_path / "db", layout=layout, export_type="db", seed=3)
    (text,) = write_export("memory_leak", tmp_path / "text", layout=layout, seed=3)
    (db_peak, db_held), (text_peak, text_held) = _ours(db), _ours(text)
    assert abs(db_peak["peak_allocated_mb"][0] - text_peak["peak_allocated_mb"][0]) < 0.1
    assert abs(db_peak["peak_reserved_mb"][0] - text_peak["peak_reserved_mb"][0]) < 0.1
    assert [n for n, _ in db_held] == [n for n, _ in text_held] and len(db_held) > 0
