"""gaps.sql: idle stretches of the device and of each stream, the step each device gap is in, and its causes."""

from __future__ import annotations

import pytest

from analyzer.rule_engine.views import create_views
from tests.views.view_case import database, module_database, rows

# Run r, device 0, steps 1 [0,100) and 2 [100,200) us. Device gaps: G1 [10,30) in step 1; G2 [100,150),
# starting exactly where step 2 starts (and step 1 ends); G3 [200,250) after the last step; G4 [251,252).
# The tasks after G2 and G3 give no step or another one, so only the step windows can give G2 its step.
# Run q: two steps start together (two devices' rows): the gap is in the one ending last. Run n: a task without
# an end (n2) is left out of every gap, as of every interval: one gap from n1 to n3.
OPS = """
run_id,device_id,stream_id,task_type,op_name,step_id,start_ns,end_ns
r,0,1,AI_CORE,o1,1,0,10000
r,0,2,AI_CORE,o2,1,30000,100000
r,0,1,AI_CORE,o3,,150000,200000
r,0,1,AI_CORE,o4,7,250000,251000
r,0,1,AI_CORE,o5,7,252000,260000
q,0,1,AI_CORE,p1,,0,10000
q,0,1,AI_CORE,p2,,60000,70000
n,0,1,AI_CORE,n1,,0,10000
n,0,1,AI_CORE,n2,,20000,
n,0,1,AI_CORE,n3,,30000,40000
"""
STEPS = """
run_id,device_id,step_id,start_ns,end_ns
r,0,1,0,100000
r,0,2,100000,200000
q,0,3,0,50000
q,1,4,0,80000
"""
# What the timeline shows inside the gaps: G1 a synchronize (16 us) and an operator compile (4 us), and an
# HCCL event (not a cause); G2 a device-side wait on another stream that runs past the gap (a device task
# counts for what it overlaps) and a synchronize ending after the gap (not its cause: the device closed
# the gap before the call returned); G3 an allocation, and a longer synchronize of another device;
# G4 (1 us, the device's own task switch) a copy.
TIMELINE = """
run_id,device_id,kind,name,task_type,start_ns,end_ns
r,,host_api,aclrtSynchronizeStream,,12000,28000
r,,host_api,aclopCompile,,11000,15000
r,,communication,hcom_allReduce_1,,15000,25000
r,0,device_task,EVENT_WAIT,EVENT_WAIT,105000,160000
r,,host_api,aclrtSynchronizeDevice,,110000,160000
r,0,host_api,aclrtMalloc,,210000,230000
r,1,host_api,aclrtSynchronizeStream,,205000,245000
r,,host_api,aclrtMemcpy,,251000,251900
"""

con = module_database(ops=OPS, steps=STEPS, timeline=TIMELINE)


def test_device_gaps_get_the_step_holding_their_start(con):
    assert rows(con, "SELECT * FROM _device_gaps ORDER BY run_id, device_id, start_ns") == [
        ("n", 0, None, 10000, 30000, 20.0, "n1", "n3", 1),
        ("q", 0, 4, 10000, 60000, 50.0, "p1", "p2", 1),
        ("r", 0, 1, 10000, 30000, 20.0, "o1", "o2", 2),
        ("r", 0, 2, 100000, 150000, 50.0, "o2", "o3", 1),  # starts at step 2's first ns: step 2
        ("r", 0, 7, 200000, 250000, 50.0, "o3", "o4", 1),  # after every step: the step of the task after
        ("r", 0, 7, 251000, 252000, 1.0, "o4", "o5", 1),
    ]


def test_stream_gaps_are_per_stream_with_the_step_of_the_task_after(con):
    assert rows(con, "SELECT * FROM _stream_gaps ORDER BY run_id, device_id, stream_id, start_ns") == [
        ("n", 0, 1, None, 10000, 30000, 20.0, "n1", "n3"),
        ("q", 0, 1, None, 10000, 60000, 50.0, "p1", "p2"),
        ("r", 0, 1, None, 10000, 150000, 140.0, "o1", "o3"),
        ("r", 0, 1, 7, 200000, 250000, 50.0, "o3", "o4"),
        ("r", 0, 1, 7, 251000, 252000, 1.0, "o4", "o5"),
    ]


def test_gap_causes_are_the_events_that_explain_the_idleness(con):
    causes = (
        "SELECT g.run_id, g.device_id, g.start_ns, c.cause, c.event_name, c.overlap_us FROM _gap_causes c "
        "JOIN _device_gaps g ON g.rowid = c.gap_row ORDER BY g.run_id, g.start_ns, c.cause"
    )
    assert rows(con, causes) == [
        ("r", 0, 10000, "compile", "aclopCompile", 4.0),
        ("r", 0, 10000, "host_sync", "aclrtSynchronizeStream", 16.0),
        ("r", 0, 100000, "stream_wait", "EVENT_WAIT", 45.0),
        ("r", 0, 200000, "memory_alloc", "aclrtMalloc", 20.0),
    ]
    top = (
        "SELECT g.run_id, g.device_id, g.start_ns, t.cause, t.event_name, t.overlap_us FROM _gap_cause_top t "
        "JOIN _device_gaps g ON g.rowid = t.gap_row ORDER BY g.run_id, g.start_ns"
    )
    assert rows(con, top) == [
        ("r", 0, 10000, "host_sync", "aclrtSynchronizeStream", 16.0),
        ("r", 0, 100000, "stream_wait", "EVENT_WAIT", 45.0),
        ("r", 0, 200000, "memory_alloc", "aclrtMalloc", 20.0),
    ]


def test_classified_gaps_give_every_device_gap_its_main_cause(con):
    sql = "SELECT run_id, step_id, start_ns, gap_us, cause, cause_event FROM _classified_gaps ORDER BY run_id, start_ns"
    assert rows(con, sql) == [
        ("n", None, 10000, 20.0, "unattributed", None),
        ("q", 4, 10000, 50.0, "unattributed", None),
        ("r", 1, 10000, 20.0, "host_sync", "aclrtSynchronizeStream"),
        ("r", 2, 100000, 50.0, "stream_wait", "EVENT_WAIT"),
        ("r", 7, 200000, 50.0, "memory_alloc", "aclrtMalloc"),
        ("r", 7, 251000, 1.0, "unattributed", None),
    ]


@pytest.mark.slow
def test_the_task_switch_a_host_event_must_exceed_is_the_chip_tables():
    # G4 lasts 1 us: within the default 2 us task switch its copy is no cause; with --set chip.task_switch_us=0.5
    # the same copy explains it.
    con = database(ops=OPS, steps=STEPS, timeline=TIMELINE)
    create_views(con, {"task_switch_us": 0.5})
    causes = (
        "SELECT c.cause, c.event_name, c.overlap_us FROM _gap_causes c JOIN _device_gaps g ON g.rowid = c.gap_row "
        "WHERE g.start_ns = 251000"
    )
    assert rows(con, causes) == [("host_sync", "aclrtMemcpy", 0.9)]
    con.close()


def test_events_overlapping_a_gap_equally_long_give_one_event_its_cause_and_name():
    tied = TIMELINE + "r,,host_api,aclopCompile,,12000,28000\n"
    con = database(ops=OPS, steps=STEPS, timeline=tied)
    top = (
        "SELECT cause, event_name FROM _gap_cause_top t JOIN _device_gaps g ON g.rowid = t.gap_row "
        "WHERE g.start_ns = 10000"
    )
    assert rows(con, top) == [("host_sync", "aclrtSynchronizeStream")]
    con.close()
