"""scaling.sql: the batch-size scaling table and verdict over catalog tables, as `npu-triage sweep` creates them."""

from __future__ import annotations

import pytest

from analyzer.ingest.database import connect
from analyzer.metrics.sweep import create_scaling_views
from analyzer.runs.catalog_schema import catalog_ddl
from tests.views.view_case import rows

# Busy ratios are binary fractions, so that a rise exactly at a threshold is exact. resnet: a rise of 0.125
# (min_rise 0.10); its 32 run has no median step time (its span is used); vit: a rise by exactly the factor
# 1.25; bert: neither; gpt: one batch size. Left out: a run without a batch size, one without a step time.
CATALOG = """
INSERT INTO catalog_runs (run_id, model_name, batch_size, cann_version) VALUES
    ('r8', 'resnet', 8, '8.0'), ('r32', 'resnet', 32, '8.0'), ('v8', 'vit', 8, '8.0'), ('v16', 'vit', 16, '8.0'),
    ('b16', 'bert', 16, '7.0'), ('b64', 'bert', 64, '7.0'), ('g4', 'gpt', 4, NULL),
    ('rnone', 'resnet', NULL, '8.0'), ('rzero', 'resnet', 64, '8.0');
INSERT INTO run_metrics (run_id, span_us, busy_ratio, step_time_p50_us) VALUES
    ('r8', 5000, 0.25, 1000), ('r32', 2000, 0.375, NULL), ('v8', 3000, 0.25, 1000), ('v16', 3000, 0.3125, 500),
    ('b16', 9000, 0.5, 1000), ('b64', 9000, 0.5625, 2500), ('g4', 1000, 0.75, 1000),
    ('rnone', 1000, 0.9, 1000), ('rzero', 0, 0.9, NULL);
"""


@pytest.fixture(scope="module")
def con():
    c = connect()
    c.execute(";".join(catalog_ddl(t) for t in ("catalog_runs", "run_metrics")))
    c.execute(CATALOG)
    create_scaling_views(c)
    yield c
    c.close()


def test_batch_size_scaling_has_a_row_per_run_with_a_batch_size_and_a_step_time(con):
    assert rows(con, "SELECT * FROM batch_size_scaling ORDER BY model_name, batch_size, run_id") == [
        ("bert", 16, "b16", "7.0", 0.5, 1000.0, 62.5, 16000.0),
        ("bert", 64, "b64", "7.0", 0.5625, 2500.0, 39.0625, 25600.0),
        ("gpt", 4, "g4", None, 0.75, 1000.0, 250.0, 4000.0),
        ("resnet", 8, "r8", "8.0", 0.25, 1000.0, 125.0, 8000.0),
        ("resnet", 32, "r32", "8.0", 0.375, 2000.0, 62.5, 16000.0),
        ("vit", 8, "v8", "8.0", 0.25, 1000.0, 125.0, 8000.0),
        ("vit", 16, "v16", "8.0", 0.3125, 500.0, 31.25, 32000.0),
    ]


def test_batch_size_scaling_verdict_per_model(con):
    assert rows(con, "SELECT * FROM batch_size_scaling_verdict ORDER BY model_name") == [
        ("bert", 2, 16, 64, 0.5, 0.5625, 0.0625, "inside_operators"),
        ("gpt", 1, 4, 4, 0.75, 0.75, 0.0, "not_enough_batch_sizes"),
        ("resnet", 2, 8, 32, 0.25, 0.375, 0.125, "scheduling_overhead"),
        ("vit", 2, 8, 16, 0.25, 0.3125, 0.0625, "scheduling_overhead"),  # exactly at min_rise_factor
    ]


def test_batch_size_scaling_verdict_thresholds_are_variables(con):
    create_scaling_views(con, min_rise=0.0625, min_rise_factor=2.0)
    try:
        assert rows(con, "SELECT model_name, verdict FROM batch_size_scaling_verdict ORDER BY model_name") == [
            ("bert", "scheduling_overhead"),  # exactly at min_rise
            ("gpt", "not_enough_batch_sizes"),
            ("resnet", "scheduling_overhead"),
            ("vit", "scheduling_overhead"),
        ]
    finally:
        create_scaling_views(con)
