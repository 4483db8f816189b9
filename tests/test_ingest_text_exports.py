"""Whole exports through load_export: every text kind lands in its table, devices split."""

from __future__ import annotations

from analyzer.ingest import load_export
from tests.read_context import write_bytes
from tests.tree_hash import tree_digest

OP_SUMMARY = (
    "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
    "Task Duration(us),Task Wait Time(us),Block Dim\n"
    "0,4294967295,1,5,add_0,Add,static,AI_VECTOR_CORE,1780676244313289.000\t,10.0,0,8\n"
    "1,4294967295,1,5,add_0,Add,static,AI_VECTOR_CORE,1780676244313290.000\t,11.0,0,8\n"
)


def test_text_export_real_level1_fills_every_text_table(real_dir):
    export = real_dir / "torch_npu_level1_rank0_text"
    before = tree_digest(export)
    ing = load_export(export)
    counts = {
        t: ing.con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
        for t in (
            "op_stats",
            "api_stats",
            "steps",
            "comm_ops",
            "memory_records",
            "op_memory",
            "l2_cache",
        )
    }
    assert counts == {
        "op_stats": 33,
        "api_stats": 57,
        "steps": 1,
        "comm_ops": 4,
        "memory_records": 2082,
        "op_memory": 184,
        "l2_cache": 179,
    }
    mine = [p for p in ing.problems if not p.file.endswith(("trace_view.json", "kernel_details.csv"))]
    assert [p.line() for p in mine if p.severity != "info"] == []
    assert tree_digest(export) == before


def test_text_export_msprof_two_devices_split_rows_and_keep_host_rows(tmp_path):
    out = tmp_path / "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA" / "mindstudio_profiler_output"
    out.mkdir(parents=True)
    write_bytes(out, "op_summary_20260605161737.csv", OP_SUMMARY)
    write_bytes(
        out,
        "api_statistic_20260605161737.csv",
        "Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\n"
        "host,acl,aclrtSynchronizeStream,120.5,2,60.25,20.0,100.5,1620.0\n",
    )
    write_bytes(
        out,
        "op_statistic_20260605161737.csv",
        "Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),"
        "Max Time(us),Ratio(%)\n"
        "0,Add,AI_VECTOR_CORE,1,10.0,10.0,10.0,10.0,100\n1,Add,AI_VECTOR_CORE,1,11.0,11.0,11.0,11.0,100\n",
    )
    write_bytes(
        out,
        "hbm_20260605161737.csv",
        "Device_id,Metric,Read(MB/s),Write(MB/s)\n1,Average,5.0,6.0\n",
    )
    ing = load_export(tmp_path)
    run = ing.run_ids[0].rsplit("/", 1)[0]
    assert sorted(ing.run_ids) == [f"{run}/dev0", f"{run}/dev1"]
    stats = ing.con.execute("SELECT run_id, total_time_us FROM op_stats ORDER BY run_id").fetchall()
    assert stats == [(f"{run}/dev0", 10.0), (f"{run}/dev1", 11.0)]
    assert ing.con.execute("SELECT run_id FROM bandwidth_summary").fetchall() == [(f"{run}/dev1",)]
    # host rows name no device: each device's run gets them
    assert ing.con.execute("SELECT run_id, is_host FROM api_stats ORDER BY 1").fetchall() == [
        (f"{run}/dev0", True),
        (f"{run}/dev1", True),
    ]
    assert [p.line() for p in ing.problems if p.severity == "error"] == []
