"""msprof task_time reader: device tasks into the timeline, exact ns, legacy header recognised."""

from __future__ import annotations

from analyzer.ingest import load_export
from analyzer.ingest.csv.task_time import load_task_time
from fixtures.generator import write_export
from tests.read_context import context_for, write_bytes

HEADER = "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)\n"


def test_task_time_rows_become_device_tasks_with_exact_ns(tmp_path, con):
    path = write_bytes(
        tmp_path,
        "task_time_20260605161737.csv",
        HEADER + "0,main_kernel,KERNEL_AICORE,1756,0,87139.380,1780676244313289.000\t,"
        "1780676244400428.380\t\n"
        + "0,N/A,PROFILING_ENABLE,1757,3,0.020,1780676244300000.123\t,1780676244300000.143\t\n",
    )
    ctx = context_for(tmp_path)
    assert load_task_time(con, (path,), ctx) == 2
    rows = con.execute(
        "SELECT kind, process, device_id, name, task_type, stream_id, thread_id, thread_name, "
        "task_id, dur_us, start_ns, end_ns FROM timeline ORDER BY start_ns"
    ).fetchall()
    assert rows == [
        (
            "device_task",
            "Ascend Hardware",
            0,
            None,
            "PROFILING_ENABLE",
            1757,
            1757,
            "Stream 1757",
            3,
            0.02,
            1780676244300000123,
            1780676244300000143,
        ),
        (
            "device_task",
            "Ascend Hardware",
            0,
            "main_kernel",
            "KERNEL_AICORE",
            1756,
            1756,
            "Stream 1756",
            0,
            87139.38,
            1780676244313289000,
            1780676244400428380,
        ),
    ]
    assert ctx.problems == []


def test_task_time_legacy_header_is_recognised_and_not_loaded(tmp_path, con):
    path = write_bytes(
        tmp_path,
        "task_time_0_1_1.csv",
        "Time(%),Time(us),Count,Avg(us),Min(us),Max(us),Waiting(us),Running(us),Pending(us),"
        "Type,API,Task ID,Op Name,Stream ID\n"
        "50.0,100.0,2,50.0,40.0,60.0,0,100.0,0,AI_CORE,N/A,5,Add,3\n",
    )
    ctx = context_for(tmp_path)
    assert load_task_time(con, (path,), ctx) == 0
    assert [(p.severity, p.file) for p in ctx.problems] == [("info", "task_time_0_1_1.csv")]
    assert "legacy" in ctx.problems[0].problem
    assert ctx.files_read == ["task_time_0_1_1.csv"]


def test_task_time_missing_task_start_is_one_problem(tmp_path, con):
    path = write_bytes(
        tmp_path,
        "task_time_1.csv",
        "Device_id,kernel_name,stream_id,task_id,task_time(us)\n0,k,1,2,3.0\n",
    )
    ctx = context_for(tmp_path)
    assert load_task_time(con, (path,), ctx) == 0
    assert len(ctx.problems) == 1 and "'task_start(us)'" in ctx.problems[0].problem


def test_task_time_slices_are_unioned(tmp_path, con):
    row = "0,k,KERNEL_AIVEC,1,{n},1.0,17806762443{n:05d}.000\t,17806762443{n:05d}.001\t\n"
    paths = tuple(
        write_bytes(tmp_path, f"task_time_slice_{i}_20260605161737.csv", HEADER + row.format(n=i + 1)) for i in range(2)
    )
    assert load_task_time(con, paths, context_for(tmp_path)) == 2
    assert con.execute("SELECT list(task_id ORDER BY task_id) FROM timeline").fetchall() == [([1, 2],)]


def test_msprof_task_in_task_time_and_timeline_json_is_one_row(tmp_path):
    """msprof writes each device task to task_time_*.csv and to msprof_*.json: one timeline row."""
    root = write_export("gappy_multistream", tmp_path, layout="msprof")[0]
    files = {p.name.split("_")[0] for p in root.rglob("*") if p.is_file()}
    assert {"task", "msprof"} <= files  # both sources of device tasks are there
    con = load_export(root).con
    repeated = con.execute(
        "SELECT count(*) - count(DISTINCT (run_id, stream_id, task_id, start_ns)), count(*) FROM timeline "
        "WHERE kind = 'device_task'"
    ).fetchone()
    assert repeated[0] == 0 and repeated[1] > 0


def test_msprof_json_device_tasks_read_after_task_time_are_never_inserted(tmp_path, con):
    """The loader reads task_time first: the JSON's twins of its tasks are left out (not inserted,
    then deleted)."""
    from analyzer.ingest.timeline.timeline import load_timeline

    root = write_export("gappy_multistream", tmp_path, layout="msprof")[0]
    task_time = tuple(sorted(root.rglob("task_time_*.csv")))
    timeline = tuple(sorted(root.rglob("msprof_*.json")))
    tasks = load_task_time(con, task_time, context_for(root))
    inserted = load_timeline(con, timeline, context_for(root))
    kinds = dict(con.execute("SELECT kind, count(*) FROM timeline GROUP BY kind").fetchall())
    assert tasks > 0 and kinds["device_task"] == tasks  # one row per task: the task_time rows
    assert inserted == sum(kinds.values()) - tasks
    unnamed = "SELECT count(*) FROM timeline WHERE kind = 'device_task' AND device_id IS NULL"
    assert con.execute(unnamed).fetchone() == (0,)


def test_every_kind_named_as_a_device_task_source_is_a_registered_reader():
    from analyzer.ingest.readers import DEVICE_TASK_KINDS, READERS

    assert DEVICE_TASK_KINDS <= set(READERS)
