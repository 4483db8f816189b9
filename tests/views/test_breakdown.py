"""breakdown.sql: the time breakdown, every microsecond of each step (or of the span) in exactly one part."""

from __future__ import annotations

from tests.views.view_case import module_database, rows

# Times in us (x1000 in the rows). Each run is one case:
# causes     one step [0,2000): a gap of each cause, communication and another task alone, a gap with no
#            cause exactly as long as a long gap (gap_threshold_us, 200 us), two launch gaps, free time
#            before and after the tasks;
# export     step 1 decomposed by the export (computing 500, communication 100, stage 1200: longer than its
#            window of 1000; the timeline shows 600 computing, a 100 us synchronize gap and 300 us free after),
#            step 2 not decomposed;
# prep       a decomposed step as torch_npu writes it: its window [0, 1000) holds 200 us before the first task
#            (Preparing), the stage of 700 (computing 600, a 100 us launch gap) and 100 us after the last task;
# untimed    a decomposed step without timestamps (computing 60, stage 90): the profiled span's proportions;
# allbusy    a decomposed step whose timeline shows no idle time: the rest of the stage is a gap of no shown cause;
# overfull   a decomposed step whose export computing (150) exceeds its stage (100): computing is the stage;
# idle       step 2 has no task: all of it is free before the next task;
# nosteps    no steps: the profiled span, named by the run's device; bare: no steps and no runs row;
# overlap    compute on two streams overlapping, communication partly hidden behind compute;
# thirds     three parts of 1 us in a span of 3: shares that round to 33.3% each would add up to 99.9%;
# frac       a decomposed step whose idle time (three gaps of 3 us, each of another cause) is scaled to 10/3 us
#            each: fractions of a ns (its window also holds 1 us before its first task and 5 us after its last).
OPS = """
run_id,device_id,stream_id,task_type,op_name,start_ns,end_ns
causes,0,1,AI_CORE,t1,100000,200000
causes,0,1,AI_CORE,t2,300000,400000
causes,0,1,AI_CORE,t3,450000,500000
causes,0,1,AI_CORE,t4,530000,600000
causes,0,2,HCCL,t5,640000,700000
causes,0,3,WRITE_BACK,t6,760000,900000
causes,0,1,AI_CORE,t7,1100000,1200000
causes,0,1,AI_CORE,t8,1210000,1300000
causes,0,1,AI_CORE,t9,1304000,1400000
export,0,1,AI_CORE,e1,0,400000
export,0,1,AI_CORE,e2,500000,700000
export,0,1,AI_CORE,e3,1000000,1500000
allbusy,0,1,AI_CORE,a1,0,100000
overfull,0,1,AI_CORE,u1,0,100000
idle,0,1,AI_CORE,i1,0,100000
nosteps,3,1,AI_CORE,n1,0,100000
nosteps,3,1,AI_CORE,n2,150000,200000
bare,0,1,AI_CORE,b1,0,100000
bare,0,1,AI_CORE,b2,150000,200000
overlap,0,1,AI_CORE,v1,0,400000
overlap,0,2,AI_CORE,v2,100000,200000
overlap,0,3,HCCL,v3,300000,600000
overlap,0,1,AI_CORE,v4,600000,1000000
overlap,0,3,HCCL,v5,700000,800000
thirds,0,1,AI_CORE,h1,0,1000
thirds,0,2,HCCL,h2,2000,3000
frac,0,1,AI_CORE,f1,1000,2000
frac,0,1,AI_CORE,f2,5000,6000
frac,0,1,AI_CORE,f3,9000,10000
frac,0,1,AI_CORE,f4,13000,14000
prep,0,1,AI_CORE,p1,200000,400000
prep,0,1,AI_CORE,p2,500000,900000
untimed,0,1,AI_CORE,w1,0,50000
untimed,0,1,AI_CORE,w2,80000,100000
"""
STEPS = """
run_id,device_id,step_id,start_ns,end_ns,computing_us,comm_not_overlapped_us,stage_us
causes,0,1,0,2000000,,,
export,0,1,0,1000000,500,100,1200
export,0,2,1000000,1500000,,,
allbusy,0,1,0,100000,80,,100
overfull,0,1,0,100000,150,10,100
idle,0,1,0,100000,,,
idle,0,2,100000,200000,,,
overlap,0,1,0,1000000,,,
frac,0,1,0,20000,4,,14
prep,0,1,0,1000000,600,,700
untimed,0,1,,,60,,90
"""
TIMELINE = """
run_id,device_id,kind,name,task_type,category,start_ns,end_ns
causes,,host_api,aclrtSynchronizeStream,,,210000,290000
causes,,host_api,aclopCompile,,,410000,440000
causes,,host_api,aclrtMalloc,,,505000,525000
causes,0,device_task,EVENT_WAIT,EVENT_WAIT,,600000,640000
causes,,log,HcclCommInitRootInfo,,host_setup,710000,750000
export,,host_api,aclrtSynchronizeStream,,,410000,490000
frac,,host_api,aclrtSynchronizeStream,,,2100,4900
frac,,host_api,aclopCompile,,,6100,8900
"""
RUNS = """
run_id,device_id
nosteps,3
"""

con = module_database(ops=OPS, steps=STEPS, timeline=TIMELINE, runs=RUNS)


# The long form of one window ($1 run, $2 window): (part, part_us, share_pct) by part_no.
PARTS = "SELECT part, part_us, share_pct FROM _time_shares WHERE run_id = $1 AND window_no = $2 ORDER BY part_no"


def test_time_part_names_list_the_parts_in_order_with_the_gaps_each_sums(con):
    names = rows(con, "SELECT part_no, part, label, gap_kind FROM _time_part_names ORDER BY part_no")
    assert [n[0] for n in names] == list(range(1, 13)) and len({n[2] for n in names}) == 12
    assert " ".join(n[1] for n in names) == (
        "computing comm_not_overlapped other_tasks gap_host_sync gap_compile gap_memory_alloc gap_stream_wait "
        "gap_host_setup gap_unattributed launch_gaps free_before free_after"
    )
    # a gap part sums the gaps of its cause (_classified_gaps.cause); launch_gaps the short ones of no cause
    assert {n[1]: n[3] for n in names if n[3]} == {
        **{n[1]: n[1].removeprefix("gap_") for n in names if n[1].startswith("gap_")},
        "launch_gaps": "launch",
    }


def test_steps_decomposed_are_those_with_the_exports_computing_and_a_stage(con):
    got = rows(con, "SELECT run_id, step_id, decomposed FROM _steps_decomposed ORDER BY run_id, step_id")
    assert [r for r in got if r[2]] == [
        ("allbusy", 1, True),
        ("export", 1, True),
        ("frac", 1, True),
        ("overfull", 1, True),
        ("prep", 1, True),
        ("untimed", 1, True),
    ]
    assert len(got) == 11  # every steps row, decomposed or not


def test_time_windows_are_the_steps_else_the_profiled_span(con):
    assert rows(con, "SELECT * FROM _time_windows ORDER BY run_id, window_no") == [
        ("allbusy", 1, "step 1", "step", "export step decomposition", 0, 100000, 100.0, 80.0, 0.0, 1),
        ("bare", None, "whole run", "profiled span", "timeline", 0, 200000, 200.0, None, None, 1),
        ("causes", 1, "step 1", "step", "timeline", 0, 2000000, 2000.0, None, None, 1),
        ("export", 1, "step 1", "step", "export step decomposition", 0, 1000000, 1200.0, 500.0, 100.0, 1),
        ("export", 2, "step 2", "step", "timeline", 1000000, 1500000, 500.0, None, None, 2),
        ("frac", 1, "step 1", "step", "export step decomposition", 0, 20000, 14.0, 4.0, 0.0, 1),
        ("idle", 1, "step 1", "step", "timeline", 0, 100000, 100.0, None, None, 1),
        ("idle", 2, "step 2", "step", "timeline", 100000, 200000, 100.0, None, None, 2),
        ("nosteps", None, "device 3", "profiled span", "timeline", 0, 200000, 200.0, None, None, 1),
        ("overfull", 1, "step 1", "step", "export step decomposition", 0, 100000, 100.0, 100.0, 0.0, 1),
        ("overlap", 1, "step 1", "step", "timeline", 0, 1000000, 1000.0, None, None, 1),
        ("prep", 1, "step 1", "step", "export step decomposition", 0, 1000000, 700.0, 600.0, 0.0, 1),
        ("thirds", None, "whole run", "profiled span", "timeline", 0, 3000, 3.0, None, None, 1),
        ("untimed", 1, "step 1", "step", "export step decomposition", 0, 100000, 90.0, 60.0, 0.0, 1),
    ]  # fmt: skip


def test_one_gap_of_each_cause_each_in_its_part(con):
    assert rows(con, PARTS, ["causes", 1]) == [
        ("computing", 606.0, 30.3),
        ("comm_not_overlapped", 60.0, 3.0),
        ("other_tasks", 140.0, 7.0),
        ("gap_host_sync", 100.0, 5.0),
        ("gap_compile", 50.0, 2.5),
        ("gap_memory_alloc", 30.0, 1.5),
        ("gap_stream_wait", 40.0, 2.0),
        ("gap_host_setup", 60.0, 3.0),  # listed: the run's timeline holds log records
        ("gap_unattributed", 200.0, 10.0),  # exactly gap_threshold_us: a long gap
        ("launch_gaps", 14.0, 0.7),
        ("free_before", 100.0, 5.0),
        ("free_after", 600.0, 30.0),
    ]
    # one window: window 0 is that window
    assert rows(con, PARTS, ["causes", 0]) == rows(con, PARTS, ["causes", 1])
    sql = """SELECT window_no, subject, basis, source, span_us, gaps_us, not_computing_us, gaps_pct, breakdown
             FROM _time_breakdown WHERE run_id = 'causes' ORDER BY window_no"""
    text = (
        "computing 606.000 us (30.3%); communication not overlapped 60.000 us (3.0%); other device tasks 140.000 us "
        "(7.0%); gaps: host synchronize / copy 100.000 us (5.0%); gaps: operator compile 50.000 us (2.5%); gaps: "
        "memory allocation 30.000 us (1.5%); gaps: wait on another stream 40.000 us (2.0%); gaps: device / HCCL init "
        "or retry (logs) 60.000 us (3.0%); long gaps, cause not shown 200.000 us (10.0%); launch gaps (short, no "
        "cause shown) 14.000 us (0.7%); free before the first task 100.000 us (5.0%); free after the last task "
        "600.000 us (30.0%)"
    )
    assert rows(con, sql) == [
        (0, "step 1", "step", "timeline", 2000.0, 480.0, 1394.0, 24.0, text),
        (1, "step 1", "step", "timeline", 2000.0, 480.0, 1394.0, 24.0, text),
    ]


def test_window_measures_are_the_timelines_nanoseconds_before_any_decomposition(con):
    sql = "SELECT * FROM _window_measures WHERE run_id IN ('causes', 'export') ORDER BY run_id, window_no"
    assert rows(con, sql) == [
        ("causes", 1, 2000000, 606000, 60000, 140000, 100000, 50000, 30000, 40000, 60000, 200000, 14000, 2, 6,
         100000, 600000),
        ("export", 1, 1000000, 600000, 0, 0, 100000, 0, 0, 0, 0, 0, 0, 0, 1, 0, 300000),
        ("export", 2, 500000, 500000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    ]  # fmt: skip


def test_an_export_decomposed_step_keeps_the_exports_parts_and_scales_the_idle_ones(con):
    # step 1: the rest of the stage (1200 - 500 - 100 = 600 us) over the timeline's gaps between its tasks (a
    # 100 us synchronize gap) in their proportions: x6; the 300 us after its last task are outside the stage
    # the 11 parts (no log records on its timeline: no gap_host_setup), those not listed here 0
    assert len(rows(con, PARTS, ["export", 1])) == 11
    assert [r for r in rows(con, PARTS, ["export", 1]) if r[1]] == [
        ("computing", 500.0, 41.7),
        ("comm_not_overlapped", 100.0, 8.3),
        ("gap_host_sync", 600.0, 50.0),
    ]
    sql = """SELECT window_no, subject, basis, source, span_us, computing_us, comm_not_overlapped_us, gap_host_sync_us,
                    free_after_us, gap_host_setup_us, computing_pct, comm_not_overlapped_pct, gap_host_sync_pct,
                    free_after_pct
             FROM _time_breakdown WHERE run_id = 'export' ORDER BY window_no"""
    assert rows(con, sql) == [
        (0, "2 steps", "steps", "export step decomposition + timeline", 1700.0, 1000.0, 100.0, 600.0, 0.0, None,
         58.8, 5.9, 35.3, 0.0),
        (1, "step 1", "step", "export step decomposition", 1200.0, 500.0, 100.0, 600.0, 0.0, None,
         41.7, 8.3, 50.0, 0.0),
        (2, "step 2", "step", "timeline", 500.0, 500.0, 0.0, 0.0, 0.0, None, 100.0, 0.0, 0.0, 0.0),
    ]  # fmt: skip


def test_a_decomposed_steps_idle_time_is_its_gaps_never_free_time(con):
    """torch_npu's Stage runs from the step's first task to its last, as msprof's step does (FP Start to
    Iteration End): its idle time is the gaps between its tasks, in the timeline's proportions, whatever its
    window (the ProfilerStep marker) holds before the first task (Preparing) and after the last."""
    assert [r for r in rows(con, PARTS, ["prep", 1]) if r[1]] == [
        ("computing", 600.0, 85.7),
        ("launch_gaps", 100.0, 14.3),
    ]
    sql = "SELECT span_us, source, free_before_us, free_after_us FROM _time_breakdown WHERE run_id = 'prep'"
    assert rows(con, sql) == [(700.0, "export step decomposition", 0.0, 0.0)] * 2


def test_a_decomposed_step_without_timestamps_takes_the_profiled_spans_proportions(con):
    """Without a window of its own, the profiled span's gaps give the proportions."""
    assert [r for r in rows(con, PARTS, ["untimed", 1]) if r[1]] == [
        ("computing", 60.0, 66.7),
        ("launch_gaps", 30.0, 33.3),
    ]
    assert rows(con, "SELECT span_us FROM _time_breakdown WHERE run_id = 'untimed' AND window_no = 1") == [(90.0,)]


def test_a_decomposed_step_without_idle_time_on_the_timeline_leaves_its_rest_unattributed(con):
    sql = """SELECT computing_us, gap_unattributed_us, free_after_us, computing_pct, gap_unattributed_pct
             FROM _time_breakdown WHERE run_id = 'allbusy' ORDER BY window_no"""
    assert rows(con, sql) == [(80.0, 20.0, 0.0, 80.0, 20.0), (80.0, 20.0, 0.0, 80.0, 20.0)]


def test_a_decomposed_step_is_never_more_than_its_stage_and_a_step_without_tasks_is_free(con):
    sql = """SELECT run_id, window_no, breakdown FROM _time_breakdown WHERE run_id IN ('overfull', 'idle')
             ORDER BY run_id, window_no"""
    assert rows(con, sql) == [
        ("idle", 0, "computing 100.000 us (50.0%); free before the first task 100.000 us (50.0%)"),
        ("idle", 1, "computing 100.000 us (100.0%)"),
        ("idle", 2, "free before the first task 100.000 us (100.0%)"),
        ("overfull", 0, "computing 100.000 us (100.0%)"),
        ("overfull", 1, "computing 100.000 us (100.0%)"),
    ]


def test_no_steps_one_window_over_the_profiled_span(con):
    sql = """SELECT run_id, window_no, step_id, subject, basis, source, span_us, computing_us, launch_gaps_us,
                    computing_pct, launch_gaps_pct, breakdown
             FROM _time_breakdown WHERE run_id IN ('nosteps', 'bare') ORDER BY run_id, window_no"""
    text = "computing 150.000 us (75.0%); launch gaps (short, no cause shown) 50.000 us (25.0%)"
    assert rows(con, sql) == [
        ("bare", 0, None, "whole run", "profiled span", "timeline", 200.0, 150.0, 50.0, 75.0, 25.0, text),
        ("bare", 1, None, "whole run", "profiled span", "timeline", 200.0, 150.0, 50.0, 75.0, 25.0, text),
        ("nosteps", 0, None, "device 3", "profiled span", "timeline", 200.0, 150.0, 50.0, 75.0, 25.0, text),
        ("nosteps", 1, None, "device 3", "profiled span", "timeline", 200.0, 150.0, 50.0, 75.0, 25.0, text),
    ]


def test_communication_hidden_behind_compute_is_computing_the_rest_is_exposed(con):
    # computing [0,400) + [600,1000); communication [300,600) + [700,800), of which [300,400) and [700,800)
    # run with compute: 200 us exposed
    sql = "SELECT breakdown FROM _time_breakdown WHERE run_id = 'overlap' AND window_no = 1"
    assert rows(con, sql) == [("computing 800.000 us (80.0%); communication not overlapped 200.000 us (20.0%)",)]


def test_shares_of_thirds_round_to_add_up_to_100(con):
    # largest remainder, ties by part order: 33.4 + 33.3 + 33.3
    assert [r for r in rows(con, PARTS, ["thirds", 1]) if r[1]] == [
        ("computing", 1.0, 33.4),
        ("comm_not_overlapped", 1.0, 33.3),
        ("launch_gaps", 1.0, 33.3),
    ]


def test_parts_scaled_to_fractions_of_a_ns_round_to_add_up_to_the_span(con):
    # rest of the stage 14 - 4 = 10 us over three gaps of 3 us: 10/3 us each; in whole ns the one left over goes
    # to the largest remainder, ties by part order (the synchronize gap first); the tenth of the shares likewise
    assert [r for r in rows(con, PARTS, ["frac", 1]) if r[1]] == [
        ("computing", 4.0, 28.6),
        ("gap_host_sync", 3.334, 23.8),
        ("gap_compile", 3.333, 23.8),
        ("launch_gaps", 3.333, 23.8),
    ]


def test_time_parts_before_rounding_free_after_takes_what_rounding_leaves(con):
    sql = "SELECT part_no, part, part_us FROM _time_parts WHERE run_id = 'frac' ORDER BY part_no"
    got = {part: us for _, part, us in rows(con, sql)}
    assert (got["computing"], got["gap_host_sync"], got["gap_compile"], got["launch_gaps"]) == (4.0, *[10 / 3] * 3)
    assert got["free_before"] == 0 and got["free_after"] == 14 - (4 + 10 / 3 + 10 / 3 + 10 / 3)


def test_every_windows_parts_add_up_to_its_span_and_100_percent(con):
    # in whole ns and tenths of a percent, as every report prints them; and the wide form's parts likewise
    sql = """SELECT run_id, window_no FROM _time_shares GROUP BY run_id, window_no, span_us
             HAVING sum(round(part_us * 1000)) <> round(any_value(span_us) * 1000)
                 OR sum(round(share_pct * 10)) <> 1000"""
    assert rows(con, sql) == []
    wide = """SELECT run_id, window_no FROM _time_breakdown
              WHERE round((computing_us + comm_not_overlapped_us + other_tasks_us + gap_host_sync_us + gap_compile_us
                     + gap_memory_alloc_us + gap_stream_wait_us + coalesce(gap_host_setup_us, 0) + gap_unattributed_us
                     + launch_gaps_us + free_before_us + free_after_us) * 1000) <> round(span_us * 1000)
                 OR round((computing_us + not_computing_us) * 1000) <> round(span_us * 1000)"""
    assert rows(con, wide) == []
    assert rows(con, "SELECT count(DISTINCT (run_id, window_no)) FROM _time_shares") == [(26,)]
