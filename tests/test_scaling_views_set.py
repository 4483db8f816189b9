"""The batch-size scaling views of a tree's runs are built from one summary pass over all the runs (one query
per summary table), not five queries a run: their inputs equal each run's own summaries."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.ingest.loader import load_export
from analyzer.metrics.summary import run_summary_tables
from analyzer.rule_engine import scaling_views

SWEEP = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "batch_sweep"


@pytest.mark.slow
def test_the_scaling_views_read_one_summary_pass_of_all_the_runs(monkeypatch):
    passes: list[list[str]] = []
    usual = scaling_views.runs_summary_tables

    def recorded(con, runs):
        passes.append([rid for rid, _ in runs])
        return usual(con, runs)

    monkeypatch.setattr(scaling_views, "runs_summary_tables", recorded)
    ingested = load_export(SWEEP)
    try:
        con, run_ids = ingested.con, ingested.run_ids
        assert len(run_ids) == 5
        scaling_views.create_run_scaling_views(con, run_ids)
        assert passes == [run_ids]
        registered = con.execute("SELECT * FROM run_metrics").fetchall()
        alone = [tuple(run_summary_tables(con, rid, rid)["run_metrics"].to_pylist()[0].values()) for rid in run_ids]
        assert registered == alone  # each run's metrics as its own query gives them, in the runs' order
        scaled = con.execute("SELECT run_id FROM batch_size_scaling ORDER BY batch_size").fetchall()
        assert [rid for (rid,) in scaled] == sorted(run_ids, key=lambda r: int(r.split("_bs")[1].split("_")[0]))
    finally:
        ingested.con.close()
