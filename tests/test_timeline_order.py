"""A run's rows keep the order they have when it is read alone, whatever other runs its connection holds."""

from __future__ import annotations

import pytest

from analyzer.ingest import load_export
from analyzer.ingest.database import connect
from fixtures.generator import write_export


def _ops_in_table_order(con, export) -> list[tuple]:
    """The run's ops as the table holds them (no ORDER BY: the order float sums over them add up in)."""
    (rid,) = load_export(export, con).run_ids
    return con.execute("SELECT start_ns, dur_us FROM ops WHERE run_id = ?", [rid]).fetchall()


@pytest.mark.slow
def test_ops_taken_from_the_timeline_keep_their_order_beside_a_large_timeline_of_another_run(tmp_path):
    export = tmp_path / "run"
    write_export("healthy", export, layout="torch_npu", seed=3)
    for csv in export.rglob("kernel_details.csv"):  # the ops then come from the timeline's device tasks
        csv.unlink()
    alone = _ops_in_table_order(connect(), export)
    crowded = connect()  # as in a batch worker's chunk or a tree: the runs read before fill the timeline
    crowded.execute(
        "INSERT INTO timeline BY NAME SELECT 'other' AS run_id, 0 AS device_id, 'device_task' AS kind, "
        "'k' AS name, 1 AS stream_id, i AS task_id, i * 1000 AS start_ns, 1.0 AS dur_us FROM range(100000) t(i)"
    )
    beside = _ops_in_table_order(crowded, export)
    assert len(alone) > 50 and beside == alone
