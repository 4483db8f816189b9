"""One definition of busy: the catalog's run_metrics equals the diagnosis' computing share, examples and real."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.diagnosis import diagnose
from analyzer.ingest.loader import load_export
from analyzer.metrics.summary import run_summary_tables
from analyzer.rule_engine.loader import default_rules_dir, load_rules
from analyzer.rule_engine.model import ConfiguredRules
from analyzer.rule_engine.views import create_views

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "examples"


def _check_busy_is_computing(export: Path) -> None:
    ingested = load_export(export)
    try:
        rules = ConfiguredRules(tuple(load_rules(default_rules_dir())))
        run_ids = [
            r
            for r in ingested.run_ids
            if ingested.con.execute("SELECT count(*) FROM ops WHERE run_id = ?", [r]).fetchall()[0][0]
        ]
        assert run_ids, f"{export}: no run with device tasks"
        for rid in run_ids:
            create_views(ingested.con)  # as the catalog's worker does before its summaries
            metrics = run_summary_tables(ingested.con, rid, rid)["run_metrics"].to_pylist()[0]
            summary = diagnose(ingested.con, rid, rules).summary
            assert metrics["busy_us"] == pytest.approx(summary.computing_us, rel=1e-9), rid
            assert metrics["span_us"] == pytest.approx(summary.span_us, rel=1e-9), rid
            assert metrics["busy_ratio"] == pytest.approx(summary.computing_ratio, rel=1e-9), rid
    finally:
        ingested.con.close()


@pytest.mark.slow  # a whole command or process: the full suite runs it
@pytest.mark.parametrize("example", ["resnet_host_sync", "cann_upgrade", "batch_sweep"])
def test_catalog_busy_ratio_examples_equals_diagnosis_computing_share(example: str) -> None:
    _check_busy_is_computing(EXAMPLES / example)


def test_catalog_busy_ratio_real_exports_equals_diagnosis_computing_share(real_dir: Path) -> None:
    for export in sorted(p for p in real_dir.iterdir() if p.is_dir()):
        _check_busy_is_computing(export)
