"""NPU_OP_MEM, the raw allocate / release events of a database export: paired into op_memory (and the
totals into memory_records) where the file has no OP_MEMORY / MEMORY_RECORD, checked with plain sqlite3
against the pairs the real torch_npu export wrote itself; a table from another session is said and left."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import analyzer

DB = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"


def _raw_events_only(real_dir: Path, tmp_path: Path) -> tuple[Path, list[tuple], float]:
    """A copy of the real level1 database without OP_MEMORY / MEMORY_RECORD (as an msprof database that holds
    only NPU_OP_MEM), and what the original says: its OP_MEMORY rows of the NPU_OP_MEM operators, peak total."""
    root = tmp_path / "raw_events"
    (root / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    shutil.copyfile(real_dir / "torch_npu_level1_rank0_db" / DB, root / DB)
    with sqlite3.connect(root / DB) as db:
        pairs = db.execute(
            "SELECT s.value, o.size / 1024.0, o.allocationTime, o.releaseTime FROM OP_MEMORY o "
            "JOIN STRING_IDS s ON s.id = o.name WHERE o.name IN (SELECT operatorName FROM NPU_OP_MEM) "
            "ORDER BY 1, 2, 3, 4"
        ).fetchall()
        (peak,) = db.execute("SELECT max(totalAllocate) / 1048576.0 FROM NPU_OP_MEM").fetchone()
        db.execute("DROP TABLE OP_MEMORY")
        db.execute("DROP TABLE MEMORY_RECORD")
    return root, pairs, peak


def test_npu_op_mem_pairs_equal_the_exports_own_operator_memory(real_dir: Path, tmp_path: Path) -> None:
    root, pairs, peak = _raw_events_only(real_dir, tmp_path)
    with analyzer.load(root) as trace:
        ours = trace.con.sql("SELECT op_name, size_kb, alloc_ns, release_ns FROM op_memory ORDER BY ALL").fetchall()
        (total,) = trace.con.sql(
            "SELECT max(allocated_mb) FROM memory_records WHERE source = 'memory_record' AND component = 'GE'"
        ).fetchall()
        assert not [p for p in trace.problems if p.location == "NPU_OP_MEM"]
    assert len(pairs) == 57 and ours == [tuple(p) for p in pairs]
    assert abs(total[0] - peak) < 0.1


def test_npu_op_mem_of_another_session_is_said_and_not_read(real_dir: Path) -> None:
    with analyzer.load(real_dir / "msprof_db_2023") as trace:
        (count,) = trace.con.sql("SELECT count(*) FROM op_memory").fetchall()[0]
        said = [p for p in trace.problems if p.location == "NPU_OP_MEM"]
    assert count == 0
    assert len(said) == 1 and "494 allocate / release events" in said[0].problem and said[0].severity == "warning"
