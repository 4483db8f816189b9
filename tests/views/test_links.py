"""logs/links.sql: the failed tasks the logs' error records name, linked to the profiled run's operators."""

from __future__ import annotations

from datetime import datetime

import pytest

from analyzer.logs.links import attach_links
from tests.views.view_case import database, rows

# Log collection L, its run from 10:00:00 (the first host record). Task (5, 42): a fault naming its kernel and
# a consequence (the fault's code is the more specific), the process' exception dump 25 s later (another one
# too late). Task (8, 1): a fault naming only its kernel; its process' dump 62 s later is too late (60 s).
# Left out: a timeout (a task only waited on), an error before the run, an INFO record naming a task.
LOG_FILES = """
run_id,file_id,path,layout
L,1,plog/plog-100_1.log,plog
L,2,plog/plog-200_1.log,plog
"""
LOG_PROCESSES = """
run_id,file_id,pid,host_process,first_time,last_time,in_run
L,1,100,true,2025-01-01 10:00:00,2025-01-01 10:05:00,true
L,2,200,true,2025-01-01 10:00:02,2025-01-01 10:05:00,true
"""
LOG_EVENTS = """
run_id,file_id,line_no,level,pid,wall_time,device_id,stream_id,task_id,kernel_name,error_code,error_kind,error_priority,error_meaning,error_advice,dump_path
L,1,10,ERROR,100,2025-01-01 10:00:05,0,5,42,MatMulV2_tiling_1,507015,fault,5,aicore exception,check the operator,
L,1,12,ERROR,100,2025-01-01 10:00:06,0,5,42,,EZ9999,consequence,1,see above,look earlier,
L,1,20,INFO,100,2025-01-01 10:00:30,,,,,,,,,,/var/log/exception_1.dump
L,1,21,INFO,100,2025-01-01 10:02:00,,,,,,,,,,/var/log/late.dump
L,1,30,ERROR,100,2025-01-01 10:00:07,0,7,9,,EI0006,timeout,3,wait timed out,look for the fault,
L,1,2,ERROR,100,2025-01-01 09:00:00,0,5,43,,507015,fault,5,aicore exception,check the operator,
L,1,40,INFO,100,2025-01-01 10:00:09,0,5,44,,,,,,,
L,2,5,ERROR,200,2025-01-01 10:00:08,,8,1,Add_kernel_0,AICORE_ERROR,fault,4,kernel fault,check the kernel,
L,2,9,INFO,200,2025-01-01 10:01:10,,,,,,,,,,/var/log/exception_2.dump
"""
# The profiled run p, its clock 8 h (480 min) behind the logs': 10:00:05 in the logs is 02:00:05 UTC,
# 1735696805 s. Task ids wrap: three ops of stream 5 task 42; the one nearest before the error is taken.
# Task (8, 1) has no op of its own: an op whose type begins the kernel's name ('Add_', not 'AddN_').
OPS = """
run_id,device_id,stream_id,task_id,op_name,op_type,task_type,start_ns,dur_us
p,0,5,42,MatMul_A,MatMulV2,AI_CORE,1735696804000000000,10
p,0,5,42,MatMul_B,MatMulV2,AI_CORE,1735696806000000000,10
p,0,5,42,MatMul_C,MatMulV2,AI_CORE,1735693200000000000,10
p,0,3,99,Add_7,Add,AI_VECTOR_CORE,1735696700000000000,4
p,0,3,98,AddN_1,AddN,AI_VECTOR_CORE,1735696800000000000,4
"""
RUNS = """
run_id
p
"""
FIRST = "plog/plog-100_1.log"


@pytest.fixture(scope="module")
def con():
    c = database(log_files=LOG_FILES, log_processes=LOG_PROCESSES, log_events=LOG_EVENTS, ops=OPS, runs=RUNS)
    attach_links(c, "L", ["p"], 480)
    yield c
    c.close()


def test_log_task_errors_one_row_per_failed_task(con):
    assert rows(con, "SELECT * FROM _log_task_errors ORDER BY log_run_id, stream_id, task_id") == [
        ("L", None, 0, 5, 42, "MatMulV2_tiling_1", "507015", "aicore exception", "check the operator",
         datetime(2025, 1, 1, 10, 0, 5), 100, FIRST, 10, 2, [f"{FIRST}:10", f"{FIRST}:12"],
         "/var/log/exception_1.dump"),
        ("L", None, None, 8, 1, "Add_kernel_0", "AICORE_ERROR", "kernel fault", "check the kernel",
         datetime(2025, 1, 1, 10, 0, 8), 200, "plog/plog-200_1.log", 5, 1, ["plog/plog-200_1.log:5"], None),
    ]  # fmt: skip


def test_log_failed_ops_links_each_failed_task_to_one_operator(con):
    sql = """SELECT run_id, matched_by, op_name, op_type, task_type, dur_us, op_start_ns, op_device_id, log_run_id,
                    stream_id, task_id, error_code, record_count
             FROM _log_failed_ops ORDER BY run_id, stream_id, task_id"""
    assert rows(con, sql) == [
        ("p", "task", "MatMul_A", "MatMulV2", "AI_CORE", 10.0, 1735696804000000000, 0, "L", 5, 42, "507015", 2),
        ("p", "kernel", "Add_7", "Add", "AI_VECTOR_CORE", 4.0, 1735696700000000000, 0, "L", 8, 1, "AICORE_ERROR", 1),
    ]
