"""The batch-size sweep: the SQL views, from a catalog and from PATH:bs=N labels, and its page."""

from __future__ import annotations

import io

import duckdb
import pytest
from rich.console import Console

from analyzer.cli import main
from analyzer.metrics.sweep import create_scaling_views, scaling_tables
from analyzer.report.sweep_terminal import sweep_table
from analyzer.runs.catalog import create_catalog_tables
from tests.tiny_exports import MODEL, write_tiny_export


def _catalog_with(rows: list[tuple[str, int, float, float]]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    create_catalog_tables(con)
    for i, (model, bs, busy, step_us) in enumerate(rows):
        con.execute("INSERT INTO catalog_runs (run_id, model_name, batch_size) VALUES (?, ?, ?)", [f"r{i}", model, bs])
        con.execute(
            "INSERT INTO run_metrics (run_id, busy_ratio, step_time_p50_us, span_us) VALUES (?, ?, ?, ?)",
            [f"r{i}", busy, step_us, step_us * 3],
        )
    create_scaling_views(con)
    return con


def test_sweep_views_rising_busy_ratio_is_scheduling_overhead():
    con = _catalog_with(
        [("m", 1, 0.2, 1000.0), ("m", 8, 0.5, 1600.0), ("flat", 1, 0.8, 500.0), ("flat", 8, 0.82, 4000.0)]
    )
    rows, verdict = scaling_tables(con)
    assert {v["model_name"]: v["verdict"] for v in verdict.to_pylist()} == {
        "flat": "inside_operators",
        "m": "scheduling_overhead",
    }
    m8 = [r for r in rows.to_pylist() if r["model_name"] == "m" and r["batch_size"] == 8][0]
    assert m8["per_sample_us"] == 200.0 and m8["throughput_samples_per_s"] == 5000.0


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_sweep_cli_paths_with_batch_labels_and_page(tmp_path, capsys):
    small = write_tiny_export(tmp_path / "bs1", seed=1, steps=3)
    big = [(t, n, s, d * 4) for t, n, s, d in MODEL]
    large = write_tiny_export(tmp_path / "bs8", seed=2, steps=3, program=big)
    page = tmp_path / "sweep.html"
    assert main(["sweep", f"{small}:bs=1", f"{large}:bs=8", "--html", str(page)]) == 0
    captured = capsys.readouterr()  # into a pipe: TSV rows on stdout, the verdict on stderr
    assert "batch size 1 -> 8" in captured.err
    assert captured.out.splitlines()[0].split("\t")[:3] == ["model_name", "batch_size", "run_id"]
    assert 'id="sweep-scaling"' in page.read_text()
    assert main(["sweep", str(small)]) == 2


def test_sweep_terminal_table_has_readable_headers_and_fixed_formats():
    rows, _ = scaling_tables(_catalog_with([("m", 1, 0.2, 1000.0), ("m", 8, 0.5, 1600.0)]))
    console = Console(file=io.StringIO(), width=120, color_system=None)
    console.print(sweep_table(rows.drop_columns(["run_id"])))
    text = console.file.getvalue()
    assert "batch size" in text and "device busy" in text and "samples/s" in text
    assert "_" not in text  # no raw column name (busy_ratio, step_time_us, ...)
    assert "50.0%" in text and "1,600.0" in text and "5,000.0" in text
