"""Tiny valid exports the malformed cases start from: torch_npu text, msprof text, a SQLite db."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

T0_US = 1_736_408_883_704_643  # an absolute epoch in microseconds, as the real exports write it
KD_HEADER = (
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),"
    "Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,"
    "Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),"
    "aic_total_cycles,aic_mac_ratio,aic_mte2_ratio,aiv_time(us),aiv_vec_ratio,aiv_mte2_ratio"
)
# (name, type, core, start offset us, duration us)
OPS = [
    ("trans_TransData_0", "TransData", "AI_VECTOR_CORE", 0.0, 53.741),
    ("Conv2D1", "Conv2D", "AI_CORE", 60.212, 313.886),
    ("Relu_2", "Relu", "AI_VECTOR_CORE", 380.5, 20.25),
    ("MatMulV2_3", "MatMulV2", "AI_CORE", 410.0, 120.5),
    ("Add_4", "Add", "AI_VECTOR_CORE", 540.125, 12.0),
    ("Softmax_5", "Softmax", "AI_VECTOR_CORE", 560.0, 30.75),
    ("MatMulV2_6", "MatMulV2", "AI_CORE", 600.0, 95.5),
    ("Cast_7", "Cast", "AI_VECTOR_CORE", 700.0, 8.125),
]
TORCH_ROOT = "host_1234_20250109073443063_ascend_pt"
APO = "ASCEND_PROFILER_OUTPUT"
MSPROF_ROOT = "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA"
MSO = "mindstudio_profiler_output"
MSPROF_STAMP = "20260605161737"


def start_text(offset_us: float) -> str:
    """Start time as the exporters write it: epoch us, 3 decimals, trailing TAB."""
    return f"{T0_US + offset_us:.3f}\t"


def kd_row(i: int, name: str, op_type: str, core: str, offset: float, dur: float) -> list[str]:
    aic = core == "AI_CORE"
    return [
        "50",
        "4294967295",
        str(11051 + i),
        "2",
        name,
        op_type,
        "dynamic",
        core,
        start_text(offset),
        f"{dur}",
        "0",
        "16",
        "0",
        "NO",
        '"""32,3,224,224"""',
        "FLOAT",
        "NCHW",
        '"""32,1,224,224"""',
        "FLOAT",
        "NCHW",
        "N/A",
        f"{dur * 0.9 if aic else 0.0:.3f}",
        "1000",
        "0.4" if aic else "0",
        "0.3" if aic else "0",
        f"{0.0 if aic else dur * 0.9:.3f}",
        "0" if aic else "0.5",
        "0" if aic else "0.2",
    ]


def kernel_details_text(rows: list[list[str]] | None = None, header: str = KD_HEADER) -> str:
    rows = rows if rows is not None else [kd_row(i, *op) for i, op in enumerate(OPS)]
    return "\r\n".join([header] + [",".join(r) for r in rows]) + "\r\n"


def csv_cell(text: str) -> str:
    """``text`` as one quoted CSV cell (inner quotes doubled)."""
    return '"' + text.replace('"', '""') + '"'


def trace_events(pid_hw: int = 3170820512) -> list[dict]:
    """Metadata, one ProfilerStep and the device tasks on 'Ascend Hardware'."""
    events: list[dict] = [
        {"ph": "M", "name": "process_name", "pid": 3096504, "tid": 0, "args": {"name": "Python"}},
        {
            "ph": "M",
            "name": "process_name",
            "pid": pid_hw,
            "tid": 0,
            "args": {"name": "Ascend Hardware"},
        },
        {"ph": "M", "name": "thread_name", "pid": pid_hw, "tid": 2, "args": {"name": "Stream 2"}},
        {
            "ph": "X",
            "name": "ProfilerStep#50",
            "pid": 3096504,
            "tid": 3096504,
            "ts": f"{T0_US - 100:.3f}",
            "dur": 1000.0,
            "cat": "cpu_op",
            "args": {},
        },
    ]
    for i, (name, _type, core, offset, dur) in enumerate(OPS):
        events.append(
            {
                "name": name,
                "pid": pid_hw,
                "tid": 2,
                "ts": f"{T0_US + offset:.3f}",
                "dur": dur,
                "ph": "X",
                "args": {
                    "Model Id": 4294967295,
                    "Task Type": core,
                    "Physic Stream Id": 2,
                    "Task Id": 11051 + i,
                    "Batch Id": 0,
                    "Subtask Id": 4294967295,
                },
            }
        )
    return events


def trace_bytes(events: list | dict | None = None) -> bytes:
    """``events`` (default: the base ``trace_events()``) as trace_view.json bytes."""
    return json.dumps(trace_events() if events is None else events).encode()


def profiler_info() -> dict:
    return {
        "config": {
            "common_config": {"activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"]},
            "experimental_config": {
                "_profiler_level": "Level1",
                "_aic_metrics": "ACL_AICORE_PIPE_UTILIZATION",
                "_export_type": "text",
            },
        },
        "end_info": {"collectionTimeEnd": (T0_US + 2000) * 1000},
        "rank_id": 0,
    }


def write_torch_text(parent: Path) -> Path:
    """A torch_npu text export: profiler_info, kernel_details, statistics, step times, trace."""
    root = parent / TORCH_ROOT
    apo = root / APO
    apo.mkdir(parents=True)
    (root / "profiler_info_0.json").write_text(json.dumps(profiler_info(), indent=4))
    (apo / "kernel_details.csv").write_bytes(kernel_details_text().encode("utf-8"))
    (apo / "op_statistic.csv").write_text(
        "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
        "Conv2D,AI_CORE,1,313.886,313.886,313.886,313.886,47.1\nMatMulV2,AI_CORE,2,216.0,95.5,108.0,120.5,32.4\n"
    )
    (apo / "api_statistic.csv").write_text(
        "Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\n"
        "acl,aclnnMatmul,30.83,3,10.277,7.67,14.54,9.238\n"
    )
    (apo / "step_trace_time.csv").write_text(
        "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
        "Communication(Not Overlapped and Exclude Receive),Preparing\r\n50,658.7,0,0,0,341.3,1000.0,0,0,100.0\r\n"
    )
    (apo / "trace_view.json").write_text(json.dumps(trace_events()))
    return root


def op_summary_text(rows: list[list[str]] | None = None) -> str:
    header = (
        "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
        "Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,"
        "Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,"
        "aicore_time(us),aic_total_cycles,aic_mac_ratio,aic_mte2_ratio"
    )
    if rows is None:
        rows = [["0"] + kd_row(i, *op)[1:25] for i, op in enumerate(OPS)]
    return "\n".join([header] + [",".join(r) for r in rows]) + "\n"


def write_msprof_text(parent: Path) -> Path:
    """A native msprof export: op_summary, task_time and the timeline in mindstudio_profiler_output."""
    root = parent / MSPROF_ROOT
    mso = root / MSO
    mso.mkdir(parents=True)
    (root / "device_0").mkdir()
    (root / "device_0" / "info.json.0").write_text(
        json.dumps({"platform_version": "Ascend910B", "DeviceInfo": [{"id": 0, "ai_core_num": 24}]})
    )
    (mso / f"op_summary_{MSPROF_STAMP}.csv").write_text(op_summary_text())
    tt = ["Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)"]
    for i, (name, _t, _core, offset, dur) in enumerate(OPS):
        tt.append(f"0,{name},KERNEL_AICORE,2,{11051 + i},{dur},{start_text(offset)},{start_text(offset + dur)}")
    (mso / f"task_time_{MSPROF_STAMP}.csv").write_text("\n".join(tt) + "\n")
    (mso / f"msprof_{MSPROF_STAMP}.json").write_text(json.dumps(trace_events(), indent=2, sort_keys=True))
    return root


DB_TABLES = {
    "STRING_IDS": "id INTEGER PRIMARY KEY, value TEXT",
    "TASK": "startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, globalTaskId INTEGER, "
    "globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId INTEGER, taskId INTEGER, "
    "modelId INTEGER",
    "COMPUTE_TASK_INFO": "name INTEGER, globalTaskId INTEGER, blockDim INTEGER, mixBlockDim INTEGER, "
    "taskType INTEGER, opType INTEGER",
    "NPU_INFO": "id INTEGER, name TEXT",
}


def write_torch_db(parent: Path, tables: tuple[str, ...] = tuple(DB_TABLES)) -> Path:
    """A torch_npu db (WAL mode, as the real ones) holding the tables asked for; returns its path."""
    apo = parent / "host_1234_20250109073443063_ascend_pt" / APO
    apo.mkdir(parents=True)
    db = apo / "ascend_pytorch_profiler_0.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    for name in tables:
        conn.execute(f"CREATE TABLE {name} ({DB_TABLES[name]})")
    names = sorted({s for op in OPS for s in op[:3]})
    ids = {s: i + 1 for i, s in enumerate(names)}
    if "STRING_IDS" in tables:
        conn.executemany("INSERT INTO STRING_IDS VALUES (?, ?)", [(i, s) for s, i in ids.items()])
    for i, (name, op_type, core, offset, dur) in enumerate(OPS):
        start = (T0_US + int(offset)) * 1000
        if "TASK" in tables:
            conn.execute(
                "INSERT INTO TASK VALUES (?,?,0,?,?,1,?,0,2,?,4294967295)",
                (start, start + int(dur * 1000), i, 100 + i, ids[core], 11051 + i),
            )
        if "COMPUTE_TASK_INFO" in tables:
            conn.execute(
                "INSERT INTO COMPUTE_TASK_INFO VALUES (?,?,16,0,?,?)",
                (ids[name], 100 + i, ids[core], ids[op_type]),
            )
    if "NPU_INFO" in tables:
        conn.execute("INSERT INTO NPU_INFO VALUES (0, 'Ascend910B')")
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db
