"""SQLite export readers: the real torch_npu and msprof DBs, read-only opening, bad files, text/DB parity."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from analyzer.ingest.loader import load_export
from analyzer.ingest.schema import TABLES
from analyzer.ingest.sqlite.sqlite_export import load_profiler_db
from fixtures.generator import expected_ops, export_units, truth, write_export
from tests.read_context import context_for
from tests.tree_hash import tree_digest

TORCH_DB = "torch_npu_level1_rank0_db"
TORCH_TEXT = "torch_npu_level1_rank0_text"
MSPROF_DB = "msprof_db_2023"


def _raw(path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def torch_db(real_dir):
    return load_export(real_dir / TORCH_DB)


@pytest.fixture(scope="module")
def torch_text(real_dir):
    return load_export(real_dir / TORCH_TEXT)


@pytest.fixture(scope="module")
def msprof_db(real_dir):
    return load_export(real_dir / MSPROF_DB)


def _one(ingested, sql: str, params: list | None = None):
    return ingested.con.execute(sql, params or []).fetchone()


def test_sqlite_torch_db_task_counts_match_kernel_details(torch_db):
    assert not [p for p in torch_db.problems if p.severity == "error"]
    rows = dict(torch_db.con.execute("SELECT task_type, count(*) FROM ops GROUP BY 1").fetchall())
    assert rows == {"AI_CORE": 23, "AI_VECTOR_CORE": 149, "MIX_AIV": 13, "DSA_SQE": 2, "HCCL": 4}
    assert _one(torch_db, "SELECT task_count FROM runs")[0] == 191


def test_sqlite_torch_db_start_ns_equals_db_integer(torch_db, real_dir):
    db = real_dir / TORCH_DB / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    start, end = _raw(db, "SELECT startNs, endNs FROM TASK WHERE globalTaskId = 3")[0]
    row = _one(torch_db, "SELECT op_name, start_ns, end_ns, dur_us FROM ops WHERE start_ns = ?", [start])
    assert row == ("trans_TransData_0", 1736410576404465403, end, (end - start) / 1000)


def test_sqlite_torch_db_shapes_have_no_quotes(torch_db):
    row = _one(
        torch_db,
        "SELECT input_shapes, output_shapes, input_formats FROM ops WHERE op_name = 'trans_TransData_0'",
    )
    assert row == ("32,3,224,224", "32,1,224,224,8", "NCHW")
    assert (
        _one(
            torch_db,
            "SELECT count(*) FROM ops WHERE contains(input_shapes, '\"') OR contains(output_shapes, '\"')",
        )[0]
        == 0
    )


def test_sqlite_torch_db_pmu_pivot_equals_task_pmu_info(torch_db, real_dir):
    db = real_dir / TORCH_DB / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    raw = dict(
        _raw(
            db,
            "SELECT s.value, p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name WHERE p.globalTaskId = 3",
        )
    )
    row = _one(
        torch_db,
        "SELECT aiv_mte2_ratio, aiv_vec_ratio, aiv_total_cycles, aiv_time_us, aiv_mte3_time_us, "
        "extra_metrics FROM ops WHERE op_name = 'trans_TransData_0'",
    )
    assert row[:3] == (raw["aiv_mte2_ratio"], raw["aiv_vec_ratio"], raw["aiv_total_cycles"])
    # the DB writes PMU times in ns; the schema (like kernel_details) has us
    assert row[3] == pytest.approx(raw["aiv_total_time"] / 1000)
    assert row[4] == pytest.approx(raw["aiv_mte3_time"] / 1000)
    assert row[5] is None  # aiv_mac_* / aiv_mte1_* are dropped as msprof drops them from op_summary


def test_sqlite_torch_db_run_metadata_from_npu_info(torch_db):
    row = _one(torch_db, "SELECT chip, rank_id, device_id, export_type, pmu_collected, aic_mode FROM runs")
    assert row == ("Ascend910B", 0, 0, "db", True, "task-based")


def test_sqlite_torch_db_step_window_and_decomposition(torch_db):
    row = _one(
        torch_db,
        "SELECT step_id, start_ns, end_ns, computing_us, comm_not_overlapped_us, stage_us, preparing_us FROM steps",
    )
    assert row == (
        50,
        1736410576386409710,
        1736410576538298460,
        8903.431,
        98071.947,
        132233.522,
        18055.693,
    )
    assert _one(torch_db, "SELECT count(*), count(DISTINCT step_id) FROM ops WHERE step_id = 50")[0] == 191


def test_sqlite_torch_db_overlap_segments_match_step_trace(torch_db):
    rows = dict(
        torch_db.con.execute(
            "SELECT name, round(sum(dur_us), 3) FROM timeline WHERE kind = 'overlap' GROUP BY 1"
        ).fetchall()
    )
    assert rows == {
        "Computing": 8903.431,
        "Communication": 102108.1,
        "Communication(Not Overlapped)": 98071.947,
        "Free": 25258.144,
    }


def test_sqlite_torch_db_timeline_kinds(torch_db):
    rows = dict(torch_db.con.execute("SELECT kind, count(*) FROM timeline GROUP BY 1").fetchall())
    assert rows["device_task"] == 552 and rows["host_api"] == 710 and rows["communication"] == 300
    assert rows["step_marker"] == 1 and rows["framework_op"] == 2459 and rows["overlap"] == 382
    marker = _one(torch_db, "SELECT name, start_ns FROM timeline WHERE kind = 'step_marker'")
    assert marker == ("ProfilerStep#50", 1736410576386409710)


def test_sqlite_torch_db_hbm_bytes_per_s_become_mb_per_s(torch_db, real_dir):
    db = real_dir / TORCH_DB / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    ts, bw = _raw(
        db,
        "SELECT timestampNs, bandwidth FROM HBM WHERE hbmId = 1 AND bandwidth > 0 "
        "AND type = (SELECT id FROM STRING_IDS WHERE value = 'write') ORDER BY 1 LIMIT 1",
    )[0]
    row = _one(
        torch_db,
        "SELECT value, unit FROM counters WHERE counter = 'hbm_write' AND instance = '1' AND ts_ns = ?",
        [ts],
    )
    assert row == (pytest.approx(bw / 1048576), "MB/s")


def test_sqlite_torch_db_comm_ops_merge_window_and_breakdown(torch_db):
    rows = torch_db.con.execute(
        "SELECT op_name, step_id, start_ns, elapse_us, transit_us, transport FROM comm_ops ORDER BY start_ns"
    ).fetchall()
    assert len(rows) == 4
    assert rows[0] == (
        "hcom_allReduce__210_0_1",
        50,
        1736410576431631806,
        88750.993,
        pytest.approx(228.56459375),
        "HCCS",
    )


def test_sqlite_msprof_db_without_pmu_table(msprof_db):
    assert _one(msprof_db, "SELECT count(*), count(aicore_time_us), count(aiv_time_us) FROM ops") == (11, 0, 0)
    row = _one(msprof_db, "SELECT chip, device_id, pmu_collected, not_collected FROM runs")
    assert row[:3] == ("Ascend910B", 2, False)
    assert any(n.startswith("pmu:") for n in row[3])
    assert any("TASK_PMU_INFO" in p.location for p in msprof_db.problems)


def test_sqlite_msprof_db_block_dim_and_leftover_table(msprof_db):
    # blockDim of COMPUTE_TASK_INFO; the leftover _COMPUTE_TASK_INFO_old_20251014 adds no rows
    row = _one(
        msprof_db,
        "SELECT block_dim, input_shapes, task_type FROM ops WHERE op_name = 'aclnnCast_CastAiCore_Cast'",
    )
    assert row == (5, "1,2049", "AI_VECTOR_CORE")
    assert _one(msprof_db, "SELECT count(DISTINCT start_ns) FROM ops")[0] == 11


def test_sqlite_reading_leaves_real_exports_byte_identical(real_dir):
    roots = [real_dir / TORCH_DB, real_dir / MSPROF_DB]
    before = [tree_digest(r) for r in roots]
    for root in roots:
        load_export(root)
    assert [tree_digest(r) for r in roots] == before


def test_sqlite_writable_wal_db_gets_no_side_files(real_dir, tmp_path):
    export = tmp_path / "run_ascend_pt"
    shutil.copytree(real_dir / TORCH_DB, export)
    before = tree_digest(export)
    load_export(export)
    assert tree_digest(export) == before
    assert not list(export.rglob("*-wal")) and not list(export.rglob("*-shm"))


def _minimal_db(path: Path) -> sqlite3.Connection:
    """A hand-made msprof-like DB: one AI_CORE task, the old ``block_dim`` column, quoted shapes."""
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE STRING_IDS(id INTEGER, value TEXT);"
        "INSERT INTO STRING_IDS VALUES (1, 'MatMul_1'), (2, 'AI_CORE'), (3, 'MatMul'), (4, '\"8,16;16,4\"');"
        "CREATE TABLE TASK(startNs INTEGER, endNs INTEGER, deviceId INTEGER, globalTaskId INTEGER,"
        " streamId INTEGER, taskId INTEGER, modelId INTEGER, contextId INTEGER);"
        "INSERT INTO TASK VALUES (1736408883704643212, 1736408883704696953, 1, 7, 2, 11, 4294967295, 4294967295);"
        "CREATE TABLE COMPUTE_TASK_INFO(name INTEGER, globalTaskId INTEGER, block_dim INTEGER,"
        " taskType INTEGER, opType INTEGER, inputShapes INTEGER, waitNs INTEGER);"
        "INSERT INTO COMPUTE_TASK_INFO VALUES (1, 7, 24, 2, 3, 4, 1500);"
    )
    return conn


def test_sqlite_locked_db_is_read_without_waiting(con, tmp_path):
    path = tmp_path / "msprof_4.db"
    locker = _minimal_db(path)
    locker.execute("PRAGMA locking_mode = EXCLUSIVE")
    locker.execute("BEGIN EXCLUSIVE")
    try:
        ctx = context_for(tmp_path)
        load_profiler_db(con, (path,), ctx)
    finally:
        locker.rollback()
        locker.close()
    row = con.execute(
        "SELECT op_name, op_type, task_type, block_dim, input_shapes, start_ns, dur_us, wait_us, "
        "model_id, context_id, device_id FROM ops"
    ).fetchall()
    assert row == [
        (
            "MatMul_1",
            "MatMul",
            "AI_CORE",
            24,
            "8,16;16,4",
            1736408883704643212,
            53.741,
            1.5,
            None,
            None,
            1,
        )
    ]


def _read_bad(con, tmp_path: Path, name: str, content: bytes):
    path = tmp_path / name
    path.write_bytes(content)
    ctx = context_for(tmp_path)
    load_profiler_db(con, (path,), ctx)
    return ctx.problems


def test_sqlite_not_sqlite_file_is_one_clear_error(con, tmp_path):
    problems = _read_bad(con, tmp_path, "msprof_1.db", b"Device_id,Op Name\n0,MatMul\n")
    assert [(p.file, p.severity) for p in problems] == [("msprof_1.db", "error")]
    assert "not an SQLite database" in problems[0].problem


def test_sqlite_empty_file_is_one_clear_error(con, tmp_path):
    problems = _read_bad(con, tmp_path, "msprof_1.db", b"")
    assert len(problems) == 1 and "empty file" in problems[0].problem


def test_sqlite_truncated_db_reports_without_traceback(con, tmp_path, real_dir):
    db = real_dir / TORCH_DB / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    problems = _read_bad(con, tmp_path, "ascend_pytorch_profiler_0.db", db.read_bytes()[:200_000])
    assert problems and all(p.file == "ascend_pytorch_profiler_0.db" for p in problems)
    assert any(p.severity == "error" for p in problems)


def test_sqlite_db_without_task_tables_reports_missing(con, tmp_path):
    path = tmp_path / "msprof_2.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE STRING_IDS(id INTEGER, value TEXT); INSERT INTO STRING_IDS VALUES (1, 'x');"
        "CREATE TABLE NPU_INFO(id INTEGER, name TEXT); INSERT INTO NPU_INFO VALUES (0, 'Ascend310P');"
    )
    conn.close()
    ctx = context_for(tmp_path)
    load_profiler_db(con, (path,), ctx)
    assert [p.location for p in ctx.problems] == ["table TASK", "table TASK / COMPUTE_TASK_INFO"]
    assert ctx.facts["chip"] == "Ascend310P"
    assert con.execute("SELECT count(*) FROM ops").fetchone()[0] == 0


def test_sqlite_unrelated_db_is_skipped_with_warning(con, tmp_path):
    path = tmp_path / "msprof_3.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes(id INTEGER)")
    conn.close()
    ctx = context_for(tmp_path)
    load_profiler_db(con, (path,), ctx)
    assert [p.severity for p in ctx.problems] == ["warning"]
    assert "none of the expected tables" in ctx.problems[0].problem


@pytest.mark.slow
def test_sqlite_db_fixture_loads_within_512mib(tmp_path, monkeypatch):
    """STRING_IDS columns are decoded once each: a lookup subquery per use gave the compute-ops
    INSERT 67 joins, out of DuckDB memory under 512 MiB on this 95 KB file."""
    monkeypatch.setenv("NPU_TRIAGE_MEMORY_LIMIT", "512MiB")
    root, *_ = write_export("comm_not_overlapped", tmp_path, layout="torch_npu", export_type="db")
    ingested = load_export(root)
    assert _one(ingested, "SELECT current_setting('memory_limit')")[0] == "512.0 MiB"
    assert not [p.line() for p in ingested.problems if p.severity == "error"]
    run = export_units(truth("comm_not_overlapped"), "torch_npu")[0][0]
    columns = (
        "op_name",
        "op_type",
        "task_type",
        "input_shapes",
        "output_formats",
        "aic_mte2_ratio",
    )
    expected = expected_ops(run, "torch_npu", "db").select(columns).sort(columns, nulls_last=True)
    got = ingested.con.execute(f"SELECT {', '.join(columns)} FROM ops ORDER BY ALL NULLS LAST").fetchall()
    assert got == expected.rows()


# Columns filled in one form of the same run but not in the other, with the reason.
PARITY_EXCEPTIONS = {
    (
        "ops",
        "cube_utilization_pct",
    ): "text only: msprof derives it at CSV export from frequency and core count; TASK_PMU_INFO has no such metric",
    ("ops", "op_state"): "text only: this torch_npu DB's COMPUTE_TASK_INFO has no opState column",
    (
        "ops",
        "hf32_eligible",
    ): "text only: this torch_npu DB's COMPUTE_TASK_INFO has no hf32Eligible column",
    (
        "ops",
        "device_id",
    ): "DB only: TASK.deviceId; the 2025-01 kernel_details has no Device_id column",
    (
        "timeline",
        "device_id",
    ): "DB only: every DB row carries deviceId; trace_view.json names no device",
    (
        "counters",
        "device_id",
    ): "DB only: counter tables carry deviceId; trace_view.json counters do not",
}
PARITY_TABLES = ("ops", "steps", "timeline", "counters")


def _filled_columns(ingested, table: str) -> set[str]:
    cols = TABLES[table].column_names()
    counts = ingested.con.execute(f"SELECT {', '.join(f'count({c})' for c in cols)} FROM {table}").fetchone()
    return {c for c, n in zip(cols, counts, strict=True) if n}


@pytest.mark.parametrize("table", PARITY_TABLES)
def test_sqlite_text_and_db_twins_fill_the_same_columns(torch_text, torch_db, table):
    filled_text, filled_db = _filled_columns(torch_text, table), _filled_columns(torch_db, table)
    assert filled_text and filled_db
    excepted = {c for (t, c) in PARITY_EXCEPTIONS if t == table}
    assert filled_text - excepted == filled_db - excepted
    for column in excepted:  # an exception that no longer holds must be removed from the list
        assert (column in filled_text) != (column in filled_db), PARITY_EXCEPTIONS[(table, column)]


def test_sqlite_ids_stored_as_text_beside_integer_ids_are_decoded(tmp_path):
    """A column of STRING_IDS ids where some rows hold the id as text: every id is decoded (the text
    '3' is not an op type)."""
    from analyzer.ingest import load_export
    from tests.malformed import base_exports as base

    db = base.write_torch_db(tmp_path)
    conn = sqlite3.connect(db)
    conn.executescript(MIXED_OP_TYPES)
    conn.close()
    types = load_export(tmp_path).con.execute("SELECT DISTINCT op_type FROM ops ORDER BY 1").fetchall()
    assert [t[0] for t in types] == sorted({op[1] for op in base.OPS})


# opType moved to a column without type affinity, rows 1 and 2 holding their id as text.
MIXED_OP_TYPES = """
ALTER TABLE COMPUTE_TASK_INFO ADD COLUMN op_type_any;
UPDATE COMPUTE_TASK_INFO SET op_type_any = CASE WHEN rowid IN (1, 2) THEN CAST(opType AS TEXT) ELSE opType END;
ALTER TABLE COMPUTE_TASK_INFO DROP COLUMN opType;
ALTER TABLE COMPUTE_TASK_INFO RENAME COLUMN op_type_any TO opType;
"""


def test_sqlite_wal_pair_is_read_from_a_private_copy_that_is_removed(tmp_path, monkeypatch):
    """Rows only in the -wal file are read; the export folder and the temporary folder keep nothing."""
    import tempfile

    from analyzer.ingest import load_export
    from tests.malformed.sqlite_cases import _wal_export
    from tests.tree_hash import tree_digest

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    export = tmp_path / "in"
    export.mkdir()
    _wal_export(export, 3)
    before = tree_digest(export)
    ingested = load_export(export)
    assert ingested.con.execute("SELECT count(*) FROM ops").fetchone()[0] == 8
    assert tree_digest(export) == before
    assert not list(scratch.glob("npu-triage-wal-*"))


def test_sqlite_wal_checkpointed_by_its_writer_while_copied_is_read_from_the_database(tmp_path, monkeypatch):
    """The profiler closes its database between our seeing its -wal file and copying it (the WAL checkpointed and
    removed): the database is read again, with the rows that were only in the WAL, and no problem."""
    from analyzer.ingest import load_export
    from analyzer.ingest.sqlite import sqlite_open
    from tests.malformed.sqlite_cases import base

    export = tmp_path / "in"
    export.mkdir()
    db = base.write_torch_db(export)
    writer = sqlite3.connect(db)  # the profiler, still writing: its last rows only in the -wal file
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("DELETE FROM TASK WHERE rowid = (SELECT max(rowid) FROM TASK)")
    writer.commit()
    assert db.with_name(db.name + "-wal").stat().st_size
    copy = shutil.copyfile

    def profiler_closes_first(src, dst, **kwargs):
        if str(src).endswith("-wal"):
            writer.close()  # checkpoints the WAL into the database and removes it
        return copy(src, dst, **kwargs)

    monkeypatch.setattr(sqlite_open.shutil, "copyfile", profiler_closes_first)
    ingested = load_export(export)
    assert not [p for p in ingested.problems if p.severity == "error"]
    assert ingested.con.execute("SELECT count(*) FROM ops").fetchone()[0] == 7  # the deleted task is gone
