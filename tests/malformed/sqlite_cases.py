"""Malformed SQLite cases: a WAL holding rows not checkpointed, missing tables, wrong types, out-of-range and
negative times, ids that STRING_IDS does not hold."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

from tests.malformed import base_exports as base
from tests.malformed.base_exports import APO, OPS, TORCH_ROOT
from tests.malformed.cases import case

N = len(OPS)
# opType moved to a column without type affinity (SQLite would turn '3' back into 3), rows 1 and 2 holding
# their id as text.
MIXED_OP_TYPES = """
ALTER TABLE COMPUTE_TASK_INFO ADD COLUMN op_type_any;
UPDATE COMPUTE_TASK_INFO SET op_type_any = CASE WHEN rowid IN (1, 2) THEN CAST(opType AS TEXT) ELSE opType END;
ALTER TABLE COMPUTE_TASK_INFO DROP COLUMN opType;
ALTER TABLE COMPUTE_TASK_INFO RENAME COLUMN op_type_any TO opType;
"""
# ---- SQLite -----------------------------------------------------------------

DB = f"{TORCH_ROOT}/{APO}/ascend_pytorch_profiler_0.db"


def _db(edit: Callable[[sqlite3.Connection], None]) -> Callable[[Path], Path]:
    """The torch db with ``edit`` run on it (checkpointed: no -wal file left)."""

    def build(folder: Path) -> Path:
        db = base.write_torch_db(folder)
        conn = sqlite3.connect(db)
        edit(conn)
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        return folder

    return build


def _wal_export(folder: Path, moved: int) -> Path:
    """A WAL-mode db whose last ``moved`` TASK rows sit only in its -wal file (not checkpointed)."""
    db = base.write_torch_db(folder)
    keep = folder / "wal_copy"
    keep.mkdir()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_autocheckpoint=0")
    rows = conn.execute("SELECT rowid, * FROM TASK ORDER BY rowid DESC LIMIT ?", (moved,)).fetchall()
    conn.execute("DELETE FROM TASK WHERE rowid IN (SELECT rowid FROM TASK ORDER BY rowid DESC LIMIT ?)", (moved,))
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.executemany(f"INSERT INTO TASK (rowid, {_TASK_COLUMNS}) VALUES ({', '.join('?' * 12)})", rows)
    conn.commit()
    # Copy the pair while the writer is open: closing it would checkpoint the -wal file away.
    shutil.copy2(db, keep / db.name)
    shutil.copy2(db.with_name(db.name + "-wal"), keep / (db.name + "-wal"))
    conn.close()
    shutil.copy2(keep / db.name, db)
    shutil.copy2(keep / (db.name + "-wal"), db.with_name(db.name + "-wal"))
    shutil.rmtree(keep)
    return folder


_TASK_COLUMNS = (
    "startNs, endNs, deviceId, connectionId, globalTaskId, globalPid, taskType, contextId, streamId, taskId, modelId"
)

case("sqlite_wal_with_rows_not_checkpointed", "clean", kind="sqlite-wal", tasks=N)(lambda d: _wal_export(d, 4))
case("sqlite_wal_holds_every_task", "clean", kind="sqlite-wal", tasks=N)(lambda d: _wal_export(d, N))
case(
    "sqlite_missing_string_ids",
    "usable",
    "ascend_pytorch_profiler_0.db",
    r"table STRING_IDS",
    kind="sqlite-missing-table",
    says="STRING_IDS",
)(lambda d: (base.write_torch_db(d, ("TASK", "COMPUTE_TASK_INFO", "NPU_INFO")), d)[1])
case(
    "sqlite_missing_task",
    "unusable",
    "ascend_pytorch_profiler_0.db",
    r"table TASK",
    kind="sqlite-missing-table",
    says="TASK",
)(lambda d: (base.write_torch_db(d, ("STRING_IDS", "COMPUTE_TASK_INFO", "NPU_INFO")), d)[1])
case(
    "sqlite_int64_min_start",
    "usable",
    "ascend_pytorch_profiler_0.db",
    r"table TASK, column startNs, row 3",
    kind="sqlite-types",
    says="out of range|negative",
    tasks=N - 1,
)(_db(lambda c: c.execute("UPDATE TASK SET startNs = -9223372036854775808 WHERE rowid = 3")))
case(
    "sqlite_text_in_start",
    "usable",
    "ascend_pytorch_profiler_0.db",
    r"table TASK, column startNs, row 2",
    kind="sqlite-types",
    says="not an integer",
    tasks=N - 1,
)(_db(lambda c: c.execute("UPDATE TASK SET startNs = 'yesterday' WHERE rowid = 2")))
case(
    "sqlite_real_us_in_end",
    "usable",
    "ascend_pytorch_profiler_0.db",
    r"table TASK, column endNs, row 5",
    kind="sqlite-types",
    says="not an integer",
    tasks=N - 1,
)(_db(lambda c: c.execute("UPDATE TASK SET endNs = 1736408883705.25 WHERE rowid = 5")))
case("sqlite_times_as_integer_text", "clean", kind="sqlite-types", tasks=N)(
    _db(lambda c: c.execute("UPDATE TASK SET startNs = CAST(startNs AS TEXT), endNs = CAST(endNs AS TEXT)"))
)
case(
    "sqlite_negative_duration",
    "usable",
    "ascend_pytorch_profiler_0.db",
    r"table TASK",
    kind="sqlite-negative-times",
    says="negative duration",
    tasks=N,
)(_db(lambda c: c.execute("UPDATE TASK SET endNs = startNs - 5000 WHERE rowid = 4")))
case(
    "sqlite_op_type_id_as_text",
    "clean",
    kind="sqlite-types",
    tasks=N,
)(_db(lambda c: c.executescript(MIXED_OP_TYPES)))
case(
    "sqlite_op_name_text_where_id_belongs",
    "usable",
    "ascend_pytorch_profiler_0.db",
    r"table COMPUTE_TASK_INFO, column name, row 6",
    kind="sqlite-types",
    says="not a STRING_IDS id",
    tasks=N,
)(_db(lambda c: c.execute("UPDATE COMPUTE_TASK_INFO SET name = 'Softmax_5' WHERE rowid = 6")))
case(
    "sqlite_unknown_string_id",
    "usable",
    "ascend_pytorch_profiler_0.db",
    r"table COMPUTE_TASK_INFO, column opType, row 1",
    kind="sqlite-types",
    says="no STRING_IDS entry",
    tasks=N,
)(_db(lambda c: c.execute("UPDATE COMPUTE_TASK_INFO SET opType = 9999 WHERE rowid = 1")))
case(
    "sqlite_duplicate_task_rows",
    "usable",
    "ascend_pytorch_profiler_0.db",
    kind="sqlite-types",
    says="exact duplicate",
    tasks=N,
)(_db(lambda c: c.execute(f"INSERT INTO TASK SELECT {_TASK_COLUMNS} FROM TASK WHERE rowid IN (1, 2)")))
