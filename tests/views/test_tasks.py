"""tasks.sql: device tasks by kind, the intervals each kind ran, and the span each run is analysed over."""

from __future__ import annotations

from tests.views.view_case import module_database, rows

# Run r, device 0 (us): two compute tasks overlapping on two streams, an untyped kernel, two communication
# tasks (one overlapping compute), an other device task, AI CPU, and a compute task without an end; device 1
# one task. Run s has steps, so its span is theirs, not its tasks'.
OPS = """
run_id,device_id,stream_id,task_type,op_type,op_name,start_ns,end_ns
r,0,1,AI_CORE,MatMul,a,0,10000
r,0,2,AI_VECTOR_CORE,Add,b,5000,15000
r,0,1,,MatMul,c,20000,25000
r,0,3,HCCL,,d,12000,30000
r,0,3,COMMUNICATION,,e,40000,45000
r,0,4,WRITE_BACK,,f,50000,52000
r,0,1,AI_CPU,MatMul,g,60000,70000
r,0,1,AI_CORE,MatMul,h,80000,
r,1,1,AI_CORE,MatMul,i,0,3000
s,0,1,AI_CORE,Conv,j,2000,3000
"""
STEPS = """
run_id,step_id,start_ns,end_ns
s,1,1000,5000
s,2,5000,9000
"""

con = module_database(ops=OPS, steps=STEPS)


def test_task_kinds_are_filters_of_ops(con):
    assert rows(con, "SELECT op_name FROM _compute_tasks ORDER BY op_name") == [
        ("a",), ("b",), ("c",), ("g",), ("h",), ("i",), ("j",)
    ]  # fmt: skip
    assert rows(con, "SELECT op_name FROM _comm_tasks ORDER BY op_name") == [("d",), ("e",)]
    assert rows(con, "SELECT count(*) FROM _compute_tasks WHERE task_type IS NULL") == [(1,)]


def test_tasks_carry_their_operator_family(con):
    """_tasks: every ops row, its name without numeric suffixes and its family (op_type [shapes, else name])."""
    sql = "SELECT op_name, op_name_norm, op_family FROM _tasks WHERE run_id = 'r' AND device_id = 0 ORDER BY op_name"
    assert rows(con, sql) == [
        ("a", "a", "MatMul [a]"), ("b", "b", "Add [b]"), ("c", "c", "MatMul [c]"), ("d", "d", None),
        ("e", "e", None), ("f", "f", None), ("g", "g", "MatMul [g]"), ("h", "h", "MatMul [h]"),
    ]  # fmt: skip
    assert rows(con, "SELECT count(*) FROM _tasks") == [(10,)]
    assert rows(con, "SELECT op_family FROM _compute_tasks WHERE op_name = 'j'") == [("Conv [j]",)]


def test_busy_comm_and_active_intervals_merge_per_device(con):
    cols = "run_id, device_id, interval_no, start_ns, end_ns, dur_us, task_count"
    assert rows(con, f"SELECT {cols} FROM _busy_intervals ORDER BY run_id, device_id, interval_no") == [
        ("r", 0, 1, 0, 15000, 15.0, 2),
        ("r", 0, 2, 20000, 25000, 5.0, 1),
        ("r", 0, 3, 60000, 70000, 10.0, 1),  # h has no end: left out
        ("r", 1, 1, 0, 3000, 3.0, 1),
        ("s", 0, 1, 2000, 3000, 1.0, 1),
    ]
    assert rows(con, f"SELECT {cols} FROM _comm_intervals ORDER BY run_id, device_id, interval_no") == [
        ("r", 0, 1, 12000, 30000, 18.0, 1),
        ("r", 0, 2, 40000, 45000, 5.0, 1),
    ]
    assert rows(con, f"SELECT {cols} FROM _active_intervals ORDER BY run_id, device_id, interval_no") == [
        ("r", 0, 1, 0, 30000, 30.0, 4),
        ("r", 0, 2, 40000, 45000, 5.0, 1),
        ("r", 0, 3, 50000, 52000, 2.0, 1),
        ("r", 0, 4, 60000, 70000, 10.0, 1),
        ("r", 1, 1, 0, 3000, 3.0, 1),
        ("s", 0, 1, 2000, 3000, 1.0, 1),
    ]


def test_op_type_busy_counts_overlap_once(con):
    assert rows(con, "SELECT * FROM _op_type_busy ORDER BY run_id, device_id, op_type") == [
        ("r", 0, "Add", 10.0, 1),
        ("r", 0, "MatMul", 25.0, 3),
        ("r", 1, "MatMul", 3.0, 1),
        ("s", 0, "Conv", 1.0, 1),
    ]


def test_run_span_is_the_steps_window_else_first_to_last_task(con):
    assert rows(con, "SELECT * FROM _run_span ORDER BY run_id") == [
        ("r", 0, 70000, 70.0, "ops"),
        ("s", 1000, 9000, 8.0, "steps"),
    ]
