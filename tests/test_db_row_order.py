"""A profiler database's rows go into the tables in one order on any number of DuckDB threads: its readers join
its tables (TASK with COMPUTE_TASK_INFO, a row with its device's tasks, a flow's two ends), and a join gives its
rows in an order of DuckDB's choosing, on several threads a new one on every read; each reader orders them."""

from __future__ import annotations

from pathlib import Path

from analyzer.ingest.database import connect
from analyzer.ingest.loader import load_export


def _in_table_order(export: Path, threads: int) -> dict[str, list[tuple]]:
    con = load_export(export, connect(threads=threads)).con
    return {
        "ops": con.execute("SELECT op_name, start_ns, stream_id, task_id FROM ops ORDER BY rowid").fetchall(),
        "timeline": con.execute(
            "SELECT kind, name, start_ns, stream_id, task_id, flow_id, flow_phase FROM timeline ORDER BY rowid"
        ).fetchall(),
    }


def test_the_real_database_gives_its_rows_in_one_order_on_any_number_of_threads(real_dir):
    # its flows (CANN API -> task, torch op -> task) came in a new order on each read on two threads
    export = real_dir / "torch_npu_level1_rank0_db"
    alone = _in_table_order(export, 1)
    assert any(kind == "flow" for kind, *_ in alone["timeline"])
    assert _in_table_order(export, 2) == alone
    assert _in_table_order(export, 2) == alone
