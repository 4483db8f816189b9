"""_gap_causes is a sweep over the gaps of a device (issue 44): the same rows as the interval join it replaces, on
random timelines, and a plan with no nested-loop join."""

from __future__ import annotations

import random
from collections import Counter

import pyarrow as pa
import pytest

from analyzer.rule_engine.views.build import create_views
from analyzer.rule_engine.views.definitions import helper_definitions

# The definition the sweep replaces: every gap joined with every event it overlaps, the device match an OR.
_INTERVAL_JOIN = """
SELECT * FROM (
    SELECT g.run_id, g.device_id, g.start_ns AS gap_start_ns,
           CASE
               WHEN e.kind IN ('host_api', 'framework_op') AND (e.name ILIKE '%SynchronizeStream%'
                    OR e.name ILIKE '%Memcpy%' OR e.name ILIKE '%aten::item%') THEN 'host_sync'
               WHEN e.kind IN ('host_api', 'framework_op') AND e.name ILIKE '%compile%' THEN 'compile'
               WHEN e.kind IN ('host_api', 'framework_op') AND e.name ILIKE '%malloc%' THEN 'memory_alloc'
               WHEN e.kind = 'device_task' AND coalesce(e.task_type, e.name) ILIKE '%EVENT_WAIT%' THEN 'stream_wait'
               WHEN e.kind = 'log' AND e.category IN ('memory_alloc', 'compile', 'host_setup') THEN e.category
           END AS cause,
           e.name AS event_name, (least(e.end_ns, g.end_ns) - greatest(e.start_ns, g.start_ns)) / 1000.0 AS overlap_us
    FROM _device_gaps g JOIN _run_nominal n ON n.run_id = g.run_id JOIN timeline e ON e.run_id = g.run_id
         AND (e.device_id IS NULL OR g.device_id IS NULL OR e.device_id = g.device_id)
         AND e.start_ns < g.end_ns AND e.end_ns > g.start_ns
    WHERE e.kind IN ('host_api', 'framework_op', 'device_task', 'log')
      AND (e.kind = 'device_task' OR (e.end_ns <= g.end_ns AND g.gap_us > n.task_switch_us)))
WHERE cause IS NOT NULL"""

_NAMES = ("aclrtSynchronizeStream", "aten::item", "opCompile", "aclrtMalloc", "aten::add", "EVENT_WAIT", "MatMul")
_KINDS = ("host_api", "framework_op", "device_task", "log", "flow")


def _device(rng: random.Random, none_share: float) -> int | None:
    return None if rng.random() < none_share else rng.randrange(2)


def _fill(con, rng: random.Random, ops: int, events: int, span: int) -> None:
    """Ops of two runs and two devices (some of no device), and events of every kind: some of no device, long
    ones spanning many gaps, some ending before they start, some without a start."""
    op_rows = []
    for i in range(ops):
        start = rng.randrange(span)
        op_rows.append(
            {
                "run_id": f"r{rng.randrange(2)}",
                "device_id": _device(rng, 0.15),
                "op_name": f"op{i}",
                "start_ns": start,
                "end_ns": start + rng.randrange(300),
            }
        )
    event_rows = []
    for _ in range(events):
        start = rng.randrange(span)
        end = start - 50 if rng.random() < 0.05 else start + int(rng.random() ** 3 * span)
        event_rows.append(
            {
                "run_id": f"r{rng.randrange(2)}",
                "device_id": _device(rng, 0.2),
                "kind": rng.choice(_KINDS),
                "name": rng.choice(_NAMES),
                "category": rng.choice(("compile", "memory_alloc", "host_setup", "other", None)),
                "start_ns": None if rng.random() < 0.03 else start,
                "end_ns": end,
            }
        )
    con.register("op_rows", pa.Table.from_pylist(op_rows))
    con.execute("INSERT INTO ops BY NAME SELECT *, 'T' AS op_type, 'AI_CORE' AS task_type FROM op_rows")
    con.register("event_rows", pa.Table.from_pylist(event_rows))
    con.execute("INSERT INTO timeline BY NAME SELECT * FROM event_rows")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_the_sweep_finds_the_rows_of_the_interval_join(con, seed: int) -> None:
    rng = random.Random(seed)
    _fill(con, rng, ops=60 + 40 * seed, events=100 + 60 * seed, span=20_000 + 30_000 * (seed % 3))
    create_views(con)
    expected = Counter(con.execute(_INTERVAL_JOIN).fetchall())
    assert sum(expected.values()) > 20  # the tables overlap: the comparison is not between two empty sets
    found = (  # a cause row names its gap by its row of _device_gaps, which holds the run, device and start
        "SELECT g.run_id, g.device_id, g.start_ns, c.cause, c.event_name, c.overlap_us FROM _gap_causes c "
        "JOIN _device_gaps g ON g.rowid = c.gap_row"
    )
    assert Counter(con.execute(found).fetchall()) == expected


def test_the_sweep_has_no_nested_loop_join(con) -> None:
    _fill(con, random.Random(1), ops=3_000, events=3_000, span=3_000_000)
    create_views(con)
    # DuckDB runs an ASOF join whose probe side it expects to be a few rows as a loop over them (bounded, not
    # quadratic); off, so that the plan shows the joins the SQL asks for.
    con.execute("SET asof_loop_join_threshold = 0")
    (definition,) = [d for d in helper_definitions() if d.name == "_gap_causes"]
    plan = con.execute("EXPLAIN " + definition.sql).fetchall()[0][1].upper()
    assert "ASOF_JOIN" in plan.replace(" ", "_")
    assert not [op for op in ("NESTED_LOOP", "BLOCKWISE_NL", "CROSS_PRODUCT") if op in plan.replace(" ", "_")]
