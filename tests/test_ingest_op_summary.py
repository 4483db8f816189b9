"""kernel_details / op_summary reading, pinned against the real torch_npu exports."""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import pytest

from analyzer.ingest import load_export

KD = "ASCEND_PROFILER_OUTPUT/kernel_details.csv"


def _raw_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_op_summary_level1_real_has_191_tasks(real_dir):
    ing = load_export(real_dir / "torch_npu_level1_rank0_text")
    assert ing.con.execute("SELECT count(*) FROM ops").fetchone()[0] == 191
    assert ing.con.execute("SELECT task_count FROM runs").fetchone()[0] == 191


def test_op_summary_start_ns_equal_written_decimal_exactly(real_dir):
    export = real_dir / "torch_npu_level1_rank0_text"
    raw = _raw_rows(export / KD)
    want = [int(Decimal(r["Start Time(us)"].strip()) * 1000) for r in raw]
    ing = load_export(export)
    got = [r[0] for r in ing.con.execute("SELECT start_ns FROM ops ORDER BY start_ns, task_id").fetchall()]
    assert got == sorted(want)
    assert 1736408883704643212 in got


def test_op_summary_shapes_lose_literal_quotes(real_dir):
    ing = load_export(real_dir / "torch_npu_level1_rank0_text")
    shapes = ing.con.execute(
        "SELECT input_shapes, output_shapes FROM ops WHERE op_name = 'trans_TransData_0'"
    ).fetchone()
    assert shapes == ("32,3,224,224", "32,1,224,224,8")
    quoted = ing.con.execute("SELECT count(*) FROM ops WHERE input_shapes LIKE '%\"%'").fetchone()[0]
    assert quoted == 0


def test_op_summary_na_cells_are_null_not_zero(real_dir):
    ing = load_export(real_dir / "torch_npu_level1_rank0_text")
    ctx = ing.con.execute("SELECT count(*), count(context_id) FROM ops").fetchone()
    assert ctx == (191, 13)  # Context ID is N/A on 178 rows, 0 on 13 (MIX tasks): N/A is NULL, 0 stays 0
    assert ing.con.execute("SELECT count(model_id) FROM ops").fetchone()[0] == 0  # 4294967295 sentinel


def test_op_summary_pmu_columns_pinned(real_dir):
    ing = load_export(real_dir / "torch_npu_level1_rank0_text")
    row = ing.con.execute(
        "SELECT aiv_time_us, aiv_mte2_time_us, aiv_mte3_time_us, mte_time_us, core_time_us, "
        "aicore_time_us, block_dim, task_type FROM ops WHERE op_name = 'trans_TransData_0'"
    ).fetchone()
    assert row == (50.522, 27.875, 33.687, 33.687, 50.522, 0.0, 32, "AI_VECTOR_CORE")


def test_op_summary_level0_pmu_null_and_marked_not_collected(real_dir):
    ing = load_export(real_dir / "torch_npu_level0_rank0_text")
    con = ing.con
    assert con.execute(
        "SELECT count(*), count(core_time_us), count(mte_time_us), count(op_type) FROM ops"
    ).fetchone() == (191, 0, 0, 0)
    pmu, not_collected = con.execute("SELECT pmu_collected, not_collected FROM runs").fetchone()
    assert pmu is False
    assert any(item.startswith("pmu:") and "Level1" in item for item in not_collected)


def test_op_summary_memoryl0_2023_header_without_op_state(real_dir):
    ing = load_export(real_dir / "torch_npu_memoryl0_2023")
    con = ing.con
    # Line 17 lacks its duration (20 cells under 21 names): skipped and named, not read shifted.
    assert con.execute("SELECT count(*), count(op_state) FROM ops").fetchone() == (20, 0)
    assert [p.location for p in ing.problems] == ["line 17, column 'Mix Block Dim'"]
    hccl = con.execute("SELECT task_id, stream_id FROM ops WHERE task_type = 'HCCL' LIMIT 1").fetchone()
    assert hccl == (None, None)
    bw = con.execute(
        "SELECT extra_metrics['aic_l0a_read_bw_gb_per_s'] FROM ops WHERE task_type='AI_CORE' LIMIT 1"
    ).fetchone()[0]
    assert bw is not None
    assert con.execute("SELECT aic_metrics FROM runs").fetchone()[0] == "MemoryL0"


def test_op_summary_arith_2023_keeps_metric_set_in_extra_metrics(real_dir):
    ing = load_export(real_dir / "torch_npu_arith_2023")
    con = ing.con
    assert con.execute("SELECT count(*) FROM ops").fetchone()[0] == 591
    keys = con.execute("SELECT map_keys(extra_metrics) FROM ops WHERE op_name = 'ZerosLike46'").fetchone()[0]
    assert "aiv_vec_fp32_ratio" in keys and "aic_cube_fops" in keys
    start = con.execute("SELECT start_ns FROM ops WHERE op_name = 'ZerosLike46'").fetchone()[0]
    assert start == 1699529622790614800


def test_op_summary_msprof_header_with_trailing_tab_and_slices(tmp_path):
    out = tmp_path / "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA" / "mindstudio_profiler_output"
    out.mkdir(parents=True)
    header = (
        "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
        "Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,"
        "Context ID,aicore_time(us),aic_mte2_time(us)\n"
    )
    row = (
        "0,4294967295,{t},1756,k{t},MatMulV2,dynamic,AI_CORE,1780676244313289.{t:03d}\t,87.38,0,24,N/A,NO,"
        '"""2,3""",N/A,80.0,20.5\n'
    )
    (out / "op_summary_slice_0_20260605161737.csv").write_text(header + row.format(t=1) + row.format(t=2))
    (out / "op_summary_slice_1_20260605161737.csv").write_text(header + row.format(t=3))
    ing = load_export(tmp_path)
    con = ing.con
    assert ing.run_ids == ["PROF_000001_20260605161708478_FRJKORBPFMHQMGLA"]
    rows = con.execute(
        "SELECT task_id, start_ns, input_shapes, mix_block_dim, mte_time_us FROM ops ORDER BY 1"
    ).fetchall()
    assert rows == [
        (1, 1780676244313289001, "2,3", None, 20.5),
        (2, 1780676244313289002, "2,3", None, 20.5),
        (3, 1780676244313289003, "2,3", None, 20.5),
    ]
    assert con.execute("SELECT producer, layout FROM runs").fetchone() == ("msprof", "mindstudio_profiler_output")


def test_op_summary_start_times_far_from_the_first_row_stay_exact(tmp_path):
    """The first row's start anchors the 64-bit conversion (csv_anchor); starts days or years away
    from it, or before the epoch, still give the exact ns; past the BIGINT range, none."""
    starts = [
        "1736408883704643.212",
        "1736408883704643.213",
        "N/A",
        "1736418883704643.999",
        "1636408883704643.001",
        "-5.5",
        "9223372036854775.808",
    ]
    want = [1736408883704643212, 1736408883704643213, None, 1736418883704643999, 1636408883704643001, -5500, None]
    out = tmp_path / "run" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    rows = "".join(f"k{i},MatMul,AI_CORE,{start}\t,1.5\n" for i, start in enumerate(starts))
    (out / "kernel_details.csv").write_text("Name,Type,Accelerator Core,Start Time(us),Duration(us)\n" + rows)
    con = load_export(tmp_path / "run").con
    got = con.execute("SELECT start_ns FROM ops ORDER BY op_name").fetchall()
    assert [r[0] for r in got] == want


def test_op_summary_multi_device_gives_one_run_per_device(tmp_path):
    out = tmp_path / "PROF_000002_20260605161708478_AAAAAAAAAAAAAAAA" / "mindstudio_profiler_output"
    out.mkdir(parents=True)
    header = "Device_id,Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us)\n"
    body = "".join(f"{d},op{i},Add,AI_VECTOR_CORE,1000.{i:03d}\t,1.0\n" for d in (0, 1) for i in range(3))
    (out / "op_summary_20260605161737.csv").write_text(header + body)
    ing = load_export(tmp_path)
    assert ing.run_ids == [
        "PROF_000002_20260605161708478_AAAAAAAAAAAAAAAA/dev0",
        "PROF_000002_20260605161708478_AAAAAAAAAAAAAAAA/dev1",
    ]
    counts = ing.con.execute("SELECT run_id, device_id, task_count FROM runs ORDER BY 1").fetchall()
    assert [c[1:] for c in counts] == [(0, 3), (1, 3)]


def _big_kernel_details(path: Path, rows: int, newline_in_name: bool) -> None:
    header = "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Input Shapes\r\n"
    name = '"Add\nfused"' if newline_in_name else "Add_fused"
    body = "".join(
        f"1,{name if i == 7 else f'op{i}'},Add,AI_VECTOR_CORE,1736408883704643.{i % 1000:03d}\t,"
        f'{i % 97}.5,"""2,{i}"""\r\n'
        for i in range(rows)
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + body + "1,short_row,Add\r\n", newline="")


@pytest.mark.slow
def test_op_summary_big_file_parallel_read_equals_serial_rows(tmp_path):
    """Files past 8 MiB go through DuckDB's parallel reader, falling back to serial for quoted newlines."""
    results = []
    for newline in (False, True):
        export = tmp_path / f"r{int(newline)}_ascend_pt"
        _big_kernel_details(export / KD, 160_000, newline)
        assert (export / KD).stat().st_size > 8 << 20
        ing = load_export(export)
        rows = ing.con.execute(
            "SELECT count(*), count(dur_us), sum(start_ns % 1000), max(input_shapes) FROM ops"
        ).fetchone()
        results.append(rows)
        names = ing.con.execute("SELECT op_name FROM ops WHERE op_name LIKE 'Add%'").fetchall()
        assert names == [("Add\nfused",)] if newline else [("Add_fused",)]
        short = ing.con.execute("SELECT op_type, dur_us FROM ops WHERE op_name = 'short_row'").fetchone()
        assert short == ("Add", None)  # padded, kept, not shifted
    assert results[0] == results[1] and results[0][0] == 160_001


def test_try_cast_of_a_csv_column_stays_a_try_cast(tmp_path):
    """DuckDB 2.0's type_pushdown turns TRY_CAST(col) over read_csv into a reader cast that fails on 'N/A';
    the ingest connection keeps it off, so a cell that is not a number is NULL, never a failed file."""
    from analyzer.ingest.database import connect

    path = tmp_path / "ids.csv"
    path.write_text("Context ID,Name\n7,a\nN/A,b\n", encoding="utf-8")
    sql = (
        'SELECT TRY_CAST("Context ID" AS HUGEINT) FROM read_csv(?, header=true, auto_detect=false, '
        "columns={'Context ID': 'VARCHAR', 'Name': 'VARCHAR'})"
    )
    con = connect()
    assert con.execute(sql, [str(path)]).fetchall() == [(7,), (None,)]
    assert con.cursor().execute(sql, [str(path)]).fetchall() == [(7,), (None,)]


def test_big_csv_files_are_scanned_in_parallel_small_ones_serially(tmp_path):
    """DuckDB's parallel CSV reader is used from a size on; small files take the serial one."""
    from analyzer.ingest.csv.csv_source import scans_in_parallel

    big, small = tmp_path / "big.csv", tmp_path / "small.csv"
    big.write_bytes(b"x\n" * (5 << 20))
    small.write_bytes(b"x\n1\n")
    assert scans_in_parallel(big) and not scans_in_parallel(small)


def _metrics_export(tmp_path: Path, name: str, cells: list[str]) -> Path:
    export = tmp_path / f"{name}_ascend_pt"
    (export / KD).parent.mkdir(parents=True)
    rows = "".join(f"1,op{i},Add,AI_CORE,1736408883704643.{i:03d},{cell},{cell},7\n" for i, cell in enumerate(cells))
    (export / KD).write_text(
        "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),aic_mac_ratio,aic_total_cycles\n" + rows,
        encoding="utf-8",
    )
    return export


def test_number_columns_parsed_by_the_csv_reader_give_the_text_paths_values(tmp_path):
    """Clean files have their number columns parsed by DuckDB's CSV reader: N/A, blanks, NaN and
    infinities are NULL, blanks around a number are skipped, exactly as the all-text path does."""
    cells = ["N/A", "", " 12.5\t", "nan", "inf", "1e3", "0.734"]
    ing = load_export(_metrics_export(tmp_path, "clean", cells))
    got = ing.con.execute("SELECT dur_us, aic_mac_ratio, aic_total_cycles FROM ops ORDER BY op_name").fetchall()
    want = [None, None, 12.5, None, None, 1000.0, 0.734]
    assert got == [(w, w, 7) for w in want]
    assert not [p for p in ing.problems if "skipped" in p.problem]


def test_a_number_column_holding_text_costs_that_cell_named_by_column_and_first_line(tmp_path):
    """A cell that is not a number is a problem of that cell (issue 45): read as missing, its row kept, its
    column named with the count and the first line."""
    ing = load_export(_metrics_export(tmp_path, "odd", ["1.5", "abc", "2.5"] + ["3.5"] * 20))
    got = ing.con.execute("SELECT op_name, dur_us FROM ops ORDER BY op_name LIMIT 3").fetchall()
    assert got == [("op0", 1.5), ("op1", None), ("op10", 3.5)]
    (cells,) = [p for p in ing.problems if "cells of 'Duration(us)'" in p.problem]
    assert cells.location == "line 3, column 'Duration(us)'"
    assert cells.problem.startswith("1 cells of 'Duration(us)' are not numbers (the first: 'abc')")


def test_a_file_whose_rows_do_not_fit_its_header_is_refused_naming_header_line_and_column(tmp_path):
    """Beyond a small share of rows that do not fit, the header does not describe the data."""
    ing = load_export(_metrics_export(tmp_path, "odd", ["1.5", "abc", "2.5", "x", "y"]))
    assert ing.con.execute("SELECT count(*) FROM ops").fetchone()[0] == 0
    (refusal,) = [p for p in ing.problems if p.severity == "error"]
    assert refusal.location == "line 3, column 'Duration(us)'"
    assert "3 of 5 rows do not fit the header" in refusal.problem and "Header: Step Id,Name" in refusal.problem


def test_a_callers_open_transaction_is_left_alone(tmp_path):
    """Inside the caller's own transaction the number columns are read as text (a BEGIN there would
    abort it): the rows are read, and the caller's transaction still commits them."""
    from analyzer.ingest.csv.op_summary import load_op_summary
    from analyzer.ingest.database import connect
    from tests.read_context import context_for

    export = _metrics_export(tmp_path, "tx", ["1.5", "2.5"])
    con = connect()
    con.execute("BEGIN TRANSACTION")
    ctx = context_for(export)
    assert load_op_summary(con, (export / KD,), ctx) == 2
    assert not ctx.problems
    con.execute("COMMIT")
    assert con.execute("SELECT count(*) FROM ops").fetchall() == [(2,)]
