"""Memory readers: memory_record, npu_module_mem, npu_mem (MB); operator_memory -> op_memory."""

from __future__ import annotations

from analyzer.ingest.readers import READERS
from tests.read_context import context_for, write_bytes

LEVEL1 = "torch_npu_level1_rank0_text/ASCEND_PROFILER_OUTPUT"
LEVEL0 = "torch_npu_level0_rank0_text/ASCEND_PROFILER_OUTPUT"


def test_memory_record_real_rows_device_and_empty_cells(real_dir, con):
    folder = real_dir / LEVEL1
    ctx = context_for(folder)
    assert READERS["memory_record"](con, (folder / "memory_record.csv",), ctx) == 1004
    first = con.execute(
        "SELECT device_id, source, component, ts_ns, allocated_mb, reserved_mb, active_mb "
        "FROM memory_records ORDER BY ts_ns, component LIMIT 1"
    ).fetchall()
    assert first == [(0, "memory_record", "APP", 1736408883573957920, None, 2109.6015625, None)]
    assert ctx.problems == []


def test_memory_files_real_row_counts_both_levels(real_dir, con):
    counts = {}
    for name in (LEVEL1, LEVEL0):
        folder = real_dir / name
        ctx = context_for(folder, run_id=name)
        counts[name] = (
            READERS["memory_record"](con, (folder / "memory_record.csv",), ctx),
            READERS["npu_module_mem"](con, (folder / "npu_module_mem.csv",), ctx),
            READERS["operator_memory"](con, (folder / "operator_memory.csv",), ctx),
        )
        assert ctx.problems == []
    assert counts == {LEVEL1: (1004, 1078, 184), LEVEL0: (1003, 1001, 184)}
    sources = con.execute("SELECT DISTINCT source, device_id FROM memory_records ORDER BY 1").fetchall()
    assert sources == [("memory_record", 0), ("npu_module_mem", 0)]


def test_memory_record_msprof_kb_is_converted_to_mb(tmp_path, con):
    path = write_bytes(
        tmp_path,
        "memory_record_20260605161737.csv",
        "Device_id,Component,Timestamp(us),Total Allocated(KB),Total Reserved(KB),Device\n"
        "2,GE,1780676244313289.001\t,2048,N/A,NPU:2\n",
    )
    assert READERS["memory_record"](con, (path,), context_for(tmp_path)) == 1
    row = con.execute("SELECT device_id, component, ts_ns, allocated_mb, reserved_mb FROM memory_records").fetchall()
    assert row == [(2, "GE", 1780676244313289001, 2.0, None)]


def test_npu_module_mem_msprof_kb_and_minus_one_is_null(tmp_path, con):
    path = write_bytes(
        tmp_path,
        "npu_module_mem_20260605161737.csv",
        "Device_id,Component,Timestamp(us),Total Reserved(KB),Device\n"
        "0,SLOG,1780676244313289.000\t,512,NPU:0\n"
        "0,APP,1780676244313290.000\t,-1,NPU:0\n",
    )
    assert READERS["npu_module_mem"](con, (path,), context_for(tmp_path)) == 2
    rows = con.execute("SELECT component, reserved_mb FROM memory_records ORDER BY ts_ns").fetchall()
    assert rows == [("SLOG", 0.5), ("APP", None)]


def test_npu_mem_event_is_component_and_kb_to_mb(tmp_path, con):
    path = write_bytes(
        tmp_path,
        "npu_mem_20260605161737.csv",
        "Device_id,event,ddr(KB),hbm(KB),memory(KB),timestamp(us)\n"
        "0,app,1024,3072,4096,1780676244313289.500\t\n"
        "0,device,N/A,2048,2048,1780676244313290.500\t\n",
    )
    assert READERS["npu_mem"](con, (path,), context_for(tmp_path)) == 2
    rows = con.execute("SELECT source, component, ts_ns, ddr_mb, hbm_mb FROM memory_records ORDER BY ts_ns").fetchall()
    assert rows == [
        ("npu_mem", "app", 1780676244313289500, 1.0, 3.0),
        ("npu_mem", "device", 1780676244313290500, None, 2.0),
    ]


def test_operator_memory_real_release_and_empty_cells(real_dir, con):
    folder = real_dir / LEVEL1
    assert READERS["operator_memory"](con, (folder / "operator_memory.csv",), context_for(folder)) == 184
    released = con.execute(
        "SELECT op_name, size_kb, alloc_ns, release_ns, duration_us, allocated_total_mb "
        "FROM op_memory WHERE op_name = 'aten::_convolution' ORDER BY alloc_ns LIMIT 1"
    ).fetchall()
    assert released == [
        (
            "aten::_convolution",
            25009.5,
            1736408883702735700,
            1736408883736793940,
            34058.24,
            978.7939453125,
        )
    ]
    unreleased = con.execute("SELECT count(*) FROM op_memory WHERE release_ns IS NULL").fetchall()[0][0]
    assert unreleased == 24


def test_operator_memory_negative_size_is_kept(tmp_path, con):
    path = write_bytes(
        tmp_path,
        "operator_memory.csv",
        "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),"
        "Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),"
        "Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),"
        "Release Total Active(MB),Stream Ptr,Device Type\r\n"
        "aten::add,-512.0,,1780676244313289.000\t,,,,,,,100.0,200.0,100.0,123,NPU:1\r\n",
    )
    assert READERS["operator_memory"](con, (path,), context_for(tmp_path)) == 1
    row = con.execute("SELECT device_id, size_kb, alloc_ns, release_ns FROM op_memory").fetchall()
    assert row == [(1, -512.0, None, 1780676244313289000)]
