"""op_statistic, communication_statistic and api_statistic readers: real and msprof variants."""

from __future__ import annotations

from analyzer.ingest.readers import READERS
from tests.read_context import context_for, write_bytes

APO = "torch_npu_level1_rank0_text/ASCEND_PROFILER_OUTPUT"


def test_op_statistic_real_file_rows_and_values(real_dir, con):
    folder = real_dir / APO
    ctx = context_for(folder)
    assert READERS["op_statistic"](con, (folder / "op_statistic.csv",), ctx) == 33
    row = con.execute(
        "SELECT device_id, model_name, core_type, call_count, total_time_us, min_time_us, "
        "avg_time_us, max_time_us, time_share_pct FROM op_stats WHERE op_type = 'ForeachAddList'"
    ).fetchall()
    assert row == [(None, None, "AI_VECTOR_CORE", 3, 1959.079, 624.152, 653.026, 706.614, 22.077)]
    assert ctx.problems == []


def test_op_statistic_msprof_device_and_model_columns_are_read_by_name(tmp_path, con):
    path = write_bytes(
        tmp_path,
        "op_statistic_20260605161737.csv",
        "Device_id,Model Name,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),"
        "Max Time(us),Ratio(%)\n"
        "1,resnet,MatMulV2,AI_CORE,4,400.0,50.0,100.0,150.0,N/A\n",
    )
    assert READERS["op_statistic"](con, (path,), context_for(tmp_path)) == 1
    row = con.execute(
        "SELECT device_id, model_name, op_type, min_time_us, avg_time_us, max_time_us, time_share_pct FROM op_stats"
    ).fetchall()
    assert row == [(1, "resnet", "MatMulV2", 50.0, 100.0, 150.0, None)]


def test_op_statistic_missing_count_header_is_one_problem_and_skipped(tmp_path, con):
    path = write_bytes(tmp_path, "op_statistic.csv", "OP Type,Core Type,Total Time(us)\nAdd,AI_CORE,1.0\n")
    ctx = context_for(tmp_path)
    assert READERS["op_statistic"](con, (path,), ctx) == 0
    assert len(ctx.problems) == 1
    problem = ctx.problems[0]
    assert (problem.file, problem.severity) == ("op_statistic.csv", "error")
    assert "'Count'" in problem.problem


def test_communication_statistic_rows_get_core_type_communication(tmp_path, con):
    path = write_bytes(
        tmp_path,
        "communication_statistic_20260605161737.csv",
        "Device_id,OP Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
        "0,hcom_allReduce_,4,2000.5,100.0,500.125,900.0,80.0\n"
        "0,hcom_broadcast_,1,N/A,N/A,N/A,N/A,N/A\n",
    )
    assert READERS["communication_statistic"](con, (path,), context_for(tmp_path)) == 2
    rows = con.execute(
        "SELECT device_id, op_type, core_type, call_count, total_time_us, avg_time_us FROM op_stats ORDER BY op_type"
    ).fetchall()
    assert rows == [
        (0, "hcom_allReduce_", "COMMUNICATION", 4, 2000.5, 500.125),
        (0, "hcom_broadcast_", "COMMUNICATION", 1, None, None),
    ]


def test_api_statistic_real_file_without_device_column_is_host(real_dir, con):
    folder = real_dir / APO
    assert READERS["api_statistic"](con, (folder / "api_statistic.csv",), context_for(folder)) == 57
    row = con.execute(
        "SELECT device_id, is_host, level, call_count, total_time_us, variance_us2 "
        "FROM api_stats WHERE api_name = 'Launch_Ffts'"
    ).fetchall()
    assert row == [(None, True, "hccl", 4, 474.41, 389.155)]
    assert con.execute("SELECT count(*) FROM api_stats WHERE NOT is_host").fetchall()[0][0] == 0


def test_api_statistic_msprof_host_device_id_is_null_and_host(tmp_path, con):
    path = write_bytes(
        tmp_path,
        "api_statistic_20260605161737.csv",
        "Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\n"
        "host,acl,aclrtSynchronizeStream,120.5,2,60.25,20.0,100.5,1620.0\n"
        "0,runtime,rtKernelLaunch,30.0,3,10.0,9.0,11.0,0.667\n",
    )
    assert READERS["api_statistic"](con, (path,), context_for(tmp_path)) == 2
    rows = con.execute("SELECT api_name, device_id, is_host FROM api_stats ORDER BY api_name").fetchall()
    assert rows == [("aclrtSynchronizeStream", None, True), ("rtKernelLaunch", 0, False)]
