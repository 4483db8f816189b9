"""The summary tables of many runs in one query per table equal each run's own, row for row."""

from __future__ import annotations

import pytest

from analyzer.ingest.loader import load_export
from analyzer.metrics.summary import run_summary_tables, runs_summary_tables
from analyzer.rule_engine.views import create_views
from tests.tiny_exports import MODEL, write_tiny_export


@pytest.mark.slow
def test_summaries_of_runs_taken_together_equal_each_runs_own(tmp_path):
    # runs of other op counts per step, step counts and op mixes: each run's typical step, top op types
    # and step times are its own only when every query keeps the runs apart
    shapes = [(MODEL, 8), (MODEL[:3], 5), (MODEL[1:] + MODEL[:2], 3)]
    for i, (program, steps) in enumerate(shapes):
        write_tiny_export(tmp_path / f"run{i}", seed=i, steps=steps, program=program)
    ingested = load_export(tmp_path)
    try:
        create_views(ingested.con)
        runs = [(rid, f"catalog-{rid}") for rid in ingested.run_ids]
        assert len(runs) == 3
        together = runs_summary_tables(ingested.con, runs)
        for (rid, cid), (program, steps) in zip(runs, shapes, strict=True):
            alone = run_summary_tables(ingested.con, rid, cid)
            assert {n: t.to_pylist() for n, t in together[rid].items()} == {n: t.to_pylist() for n, t in alone.items()}
            assert together[rid]["op_positions"].num_rows == len(program)  # its own typical step
            (metrics,) = together[rid]["run_metrics"].to_pylist()
            assert (metrics["run_id"], metrics["step_count"]) == (cid, steps)
    finally:
        ingested.con.close()
