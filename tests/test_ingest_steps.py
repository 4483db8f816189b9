"""step_trace_time (torch_npu, three header variants) and msprof step_trace readers."""

from __future__ import annotations

from analyzer.ingest.readers import READERS
from tests.read_context import context_for, write_bytes

STEP_TRACE_HEADER = (
    "Device_id,Iteration ID,FP Start(us),BP End(us),Iteration End(us),Iteration Time(us),"
    "FP to BP Time(us),Iteration Refresh(us),Data Aug Bound(us),Model ID,"
    "Reduce Start(us),Reduce Duration(us),Reduce Start(us),Reduce Duration(us)\n"
)


def test_step_trace_time_real_2025_step_50_values(real_dir, con):
    folder = real_dir / "torch_npu_level1_rank0_text/ASCEND_PROFILER_OUTPUT"
    ctx = context_for(folder)
    assert READERS["step_trace_time"](con, (folder / "step_trace_time.csv",), ctx) == 1
    row = con.execute(
        "SELECT step_id, device_id, computing_us, comm_not_overlapped_us, stage_us, preparing_us, source FROM steps"
    ).fetchall()
    assert row == [(50, None, 8873.756000000001, 101963.203, 136581.0, 17902.5, "step_trace_time")]
    assert ctx.problems == []


def test_step_trace_time_real_2023_variant_has_no_preparing(real_dir, con):
    folder = real_dir / "torch_npu_memoryl0_2023/ASCEND_PROFILER_OUTPUT"
    assert READERS["step_trace_time"](con, (folder / "step_trace_time.csv",), context_for(folder)) == 1
    row = con.execute("SELECT step_id, computing_us, stage_us, bubble_us, preparing_us FROM steps").fetchall()
    assert row == [(2, 75174.57464453117, 291698.0, 0.0, None)]


def test_step_trace_time_device_id_first_and_empty_step_is_null(tmp_path, con):
    path = write_bytes(
        tmp_path,
        "step_trace_time.csv",
        "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,"
        "Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\r\n"
        "3,,100.5,20.0,5.0,25.0,10.0,130.5,0,20.0,7.25\r\n",
    )
    assert READERS["step_trace_time"](con, (path,), context_for(tmp_path)) == 1
    row = con.execute("SELECT device_id, step_id, computing_us, preparing_us FROM steps").fetchall()
    assert row == [(3, None, 100.5, 7.25)]


def test_step_trace_duplicate_reduce_headers_exact_ns_and_na(tmp_path, con):
    path = write_bytes(
        tmp_path,
        "step_trace_20260605161737.csv",
        STEP_TRACE_HEADER
        + "0,1,N/A,N/A,1780676244333289.125\t,20000.0,N/A,5.0,N/A,1,N/A,N/A,N/A,N/A\n"
        + "0,2,1780676244340000.001\t,1780676244350000.000\t,1780676244353289.125\t,20000.0,"
        "10000.5,5.0,6711.0,1,1780676244350100.000\t,100,1780676244350300.000\t,200\n",
    )
    ctx = context_for(tmp_path)
    assert READERS["step_trace"](con, (path,), ctx) == 2
    rows = con.execute(
        "SELECT step_id, device_id, start_ns, end_ns, iteration_time_us, fp_bp_time_us, "
        "data_aug_bound_us, source FROM steps ORDER BY step_id"
    ).fetchall()
    assert rows == [
        (1, 0, 1780676244313289125, 1780676244333289125, 20000.0, None, None, "step_trace"),
        (2, 0, 1780676244340000001, 1780676244353289125, 20000.0, 10000.5, 6711.0, "step_trace"),
    ]
    assert ctx.problems == []


def test_step_trace_without_iteration_end_is_reported_and_skipped(tmp_path, con):
    path = write_bytes(tmp_path, "step_trace_1.csv", "Device_id,Iteration ID,FP Start(us)\n0,1,5.0\n")
    ctx = context_for(tmp_path)
    assert READERS["step_trace"](con, (path,), ctx) == 0
    assert [p.severity for p in ctx.problems] == ["error"]
    assert "'Iteration End(us)'" in ctx.problems[0].problem and ctx.problems[0].file == "step_trace_1.csv"
