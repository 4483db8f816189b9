"""memory.sql: the allocator's total over time, its peak against the chip's memory, what is alive then, per step."""

from __future__ import annotations

from tests.views.view_case import module_database, rows

# Run r, device 0: PTA is the total (GE is a part of it; APP has no allocated value); its allocated peak
# (300 MB) is reached first at 2000 and again at 3000. The process' reserved memory: memory_record APP 600
# and npu_module_mem APP 650 inside the run's window, 9999 far outside it (another session).
# Run s, no device: the component with the most samples that have an allocated value is the total (Y: 3,
# X: 2 of its 4). r's chip has 32 GB, s names none (the default chip, 64 GB).
MEMORY = """
run_id,device_id,source,component,ts_ns,allocated_mb,reserved_mb
r,0,memory_record,PTA,1000,100,200
r,0,memory_record,PTA,2000,300,400
r,0,memory_record,PTA,2500,250,450
r,0,memory_record,PTA,3000,300,500
r,0,memory_record,PTA,4000,150,500
r,0,memory_record,GE,1000,50,60
r,0,memory_record,GE,2000,60,70
r,0,memory_record,APP,2500,,600
r,0,npu_module_mem,APP,3500,,650
r,0,npu_module_mem,APP,99999999,,9999
s,,memory_record,X,1000,10,20
s,,memory_record,X,2000,30,40
s,,memory_record,X,3000,,40
s,,memory_record,X,4000,,90
s,,memory_record,Y,1000,5,5
s,,memory_record,Y,2000,6,6
s,,memory_record,Y,2500,7,7
"""
# Alive at r's peak (2000): allocated at or before it, released after it or never; a device-less row counts
# for every device. C is released at the peak, D allocated after it, E empty, G on another device.
OP_MEMORY = """
run_id,device_id,op_name,size_kb,alloc_ns,release_ns
r,0,A,10,1500,2500
r,0,B,20,2000,
r,0,C,30,500,2000
r,0,D,40,2100,
r,0,E,0,1000,
r,,F,50,1000,3000
r,1,G,60,1000,
"""
# Step 2 starts at the 2500 sample: it is step 2's (half-open windows).
STEPS = """
run_id,step_id,start_ns,end_ns
r,1,500,2500
r,2,2500,5000
"""

RUNS = """
run_id,chip
r,Ascend910B4
s,
"""

con = module_database(memory_records=MEMORY, op_memory=OP_MEMORY, steps=STEPS, runs=RUNS)


def test_memory_total_is_the_component_holding_the_whole_framework(con):
    assert rows(con, "SELECT * FROM _memory_total ORDER BY run_id, device_id, ts_ns") == [
        ("r", 0, "PTA", 1000, 100.0, 200.0),
        ("r", 0, "PTA", 2000, 300.0, 400.0),
        ("r", 0, "PTA", 2500, 250.0, 450.0),
        ("r", 0, "PTA", 3000, 300.0, 500.0),
        ("r", 0, "PTA", 4000, 150.0, 500.0),
        ("s", -1, "Y", 1000, 5.0, 5.0),
        ("s", -1, "Y", 2000, 6.0, 6.0),
        ("s", -1, "Y", 2500, 7.0, 7.0),
    ]


def test_memory_peak_is_the_first_sample_at_the_maximum_against_the_chips_memory(con):
    r, s = 32 * 1024.0, 64 * 1024.0
    assert rows(con, "SELECT * FROM _memory_peak ORDER BY run_id, device_id") == [
        ("r", 0, "PTA", 5, 1000, 4000, 300.0, 2000, 400.0, 500.0, 3000, 300.0, 650.0, r, 300 / r, 500 / r, 650 / r),
        ("s", -1, "Y", 3, 1000, 2500, 7.0, 2500, 7.0, 7.0, 2500, 7.0, None, s, 7 / s, 7 / s, 7 / s),
    ]  # fmt: skip


def test_memory_at_peak_lists_the_allocations_alive_at_the_peak(con):
    assert rows(con, "SELECT * FROM _memory_at_peak ORDER BY run_id, device_id, op_name") == [
        ("r", 0, "A", 10.0, 1500, 2500, 2000),
        ("r", 0, "B", 20.0, 2000, None, 2000),
        ("r", 0, "F", 50.0, 1000, 3000, 2000),
    ]


def test_memory_steps_floor_and_peak_inside_each_step(con):
    assert rows(con, "SELECT * FROM _memory_steps ORDER BY run_id, device_id, step_no") == [
        ("r", 0, 1, 1, 500, 2500, 2, 100.0, 300.0, 400.0),
        ("r", 0, 2, 2, 2500, 5000, 3, 150.0, 300.0, 500.0),
    ]
