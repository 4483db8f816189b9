"""communication.sql: how much communication time no compute task hid, per run and device."""

from __future__ import annotations

from tests.views.view_case import module_database, rows

# Times in us (x1000). Device 0: communication [300,600) and [700,800) (two overlapping tasks, counted once),
# compute [0,400) and [600,1000): 100 + 100 us hidden. Device 1: communication alone. Device NULL: its own key.
OPS = """
run_id,device_id,stream_id,task_type,op_name,start_ns,end_ns
r,0,1,AI_CORE,c1,0,400000
r,0,3,HCCL,m1,300000,600000
r,0,1,AI_CORE,c2,600000,1000000
r,0,3,HCCL,m2,700000,800000
r,0,4,COMMUNICATION,m3,750000,800000
r,1,3,HCCL,m4,0,50000
r,,3,HCCL,m5,0,20000
r,,1,AI_CORE,c3,0,5000
"""

con = module_database(ops=OPS)


def test_comm_exposed_is_communication_no_compute_task_hid(con):
    assert rows(con, "SELECT * FROM _comm_exposed ORDER BY run_id, device_id NULLS LAST") == [
        ("r", 0, 400.0, 200.0, 200.0),
        ("r", 1, 50.0, 0.0, 50.0),
        ("r", None, 20.0, 5.0, 15.0),
    ]
