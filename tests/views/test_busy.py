"""busy.sql: THE busy time of each run, the time breakdown's computing part over all its windows."""

from __future__ import annotations

from tests.views.view_case import module_database, rows

# Times in us (x1000). steps: two steps [0,100) and [100,300); compute [50,150) crosses their boundary,
# [250,350) runs past the last step (outside every window), communication [150,200) alone is not busy.
# nosteps: no steps, so the span is first task start .. last task end. export: the export's own computing.
OPS = """
run_id,device_id,stream_id,task_type,op_name,start_ns,end_ns
steps,0,1,AI_CORE,a,50000,150000
steps,0,2,HCCL,b,150000,200000
steps,0,1,AI_VECTOR_CORE,c,250000,350000
nosteps,0,1,MIX_AIC,d,10000,40000
nosteps,0,1,AI_CPU,e,60000,70000
export,0,1,AI_CORE,f,0,90000
"""
STEPS = """
run_id,step_id,start_ns,end_ns,computing_us,stage_us
steps,1,0,100000,,
steps,2,100000,300000,,
export,1,0,100000,60,120
"""

con = module_database(ops=OPS, steps=STEPS)


def test_run_busy_is_the_computing_part_of_all_windows(con):
    assert rows(con, "SELECT * FROM _run_busy ORDER BY run_id") == [
        ("export", 120.0, 60.0, 0.5),
        ("nosteps", 60.0, 40.0, 40.0 / 60.0),
        ("steps", 300.0, 150.0, 0.5),
    ]
