"""Memory-over-time CSVs -> the memory_records table, always in MB.

* ``memory_record.csv`` (torch_npu): ``Component,Timestamp(us),Total Allocated(MB),
  Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type``; msprof ``memory_record_*.csv``:
  ``Device_id,Component,Timestamp(us),Total Allocated(KB),Total Reserved(KB),Device`` (KB to MB).
* ``npu_module_mem.csv`` (torch_npu, MB) / ``npu_module_mem_*.csv`` (msprof, KB):
  ``[Device_id,]Component,Timestamp(us),Total Reserved(MB|KB)[,Device]``; ``-1`` is unknown: NULL.
* ``npu_mem_*.csv`` (msprof): ``Device_id,event,ddr(KB),hbm(KB),memory(KB),timestamp(us)``; the
  event (``app`` / ``device``) is the component; ``memory(KB)`` is ddr + hbm and is not kept.

The device comes from ``Device_id``, else from a ``Device Type`` / ``Device`` cell like ``NPU:0``.
Empty cells are NULL, never zero. Timestamps carry a trailing TAB and are kept exact.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.ingest.csv.csv_columns import Field, load_csv_table
from analyzer.ingest.model import ReadContext

_DEVICE = Field("device_id", ("Device_id", "Device ID", "Device Type", "Device"), "device")
_TIME = Field("ts_ns", ("Timestamp(us)", "timestamp(us)"), "ns", required=True)

_MEMORY_RECORD = (
    _DEVICE,
    Field("component", ("Component",), "text", required=True),
    _TIME,
    Field("allocated_mb", ("Total Allocated(MB)",), "double"),
    Field("allocated_mb", ("Total Allocated(KB)",), "kb_to_mb"),
    Field("reserved_mb", ("Total Reserved(MB)",), "double", required=True),
    Field("reserved_mb", ("Total Reserved(KB)",), "kb_to_mb", required=True),
    Field("active_mb", ("Total Active(MB)",), "double"),
    Field("active_mb", ("Total Active(KB)",), "kb_to_mb"),
)
_NPU_MODULE_MEM = (
    _DEVICE,
    Field("component", ("Component",), "text", required=True),
    _TIME,
    Field("reserved_mb", ("Total Reserved(MB)",), "double", required=True),
    Field("reserved_mb", ("Total Reserved(KB)",), "kb_to_mb", required=True),
)
_NPU_MEM = (
    _DEVICE,
    Field("component", ("event",), "text", required=True),
    _TIME,
    Field("ddr_mb", ("ddr(KB)",), "kb_to_mb"),
    Field("hbm_mb", ("hbm(KB)",), "kb_to_mb"),
)


def load_memory_record(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read memory_record files into memory_records (source 'memory_record')."""
    return load_csv_table(
        con,
        paths,
        ctx,
        "memory_records",
        _MEMORY_RECORD,
        "memory_record (Component, Timestamp(us), Total Reserved(MB|KB), ...)",
        constants={"source": "memory_record"},
    )


def load_npu_module_mem(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read npu_module_mem files into memory_records (source 'npu_module_mem')."""
    reserved = "CASE WHEN reserved_mb >= 0 THEN reserved_mb END"  # -1 (KB or MB) is 'unknown'
    return load_csv_table(
        con,
        paths,
        ctx,
        "memory_records",
        _NPU_MODULE_MEM,
        "npu_module_mem (Component, Timestamp(us), Total Reserved(MB|KB), ...)",
        constants={"source": "npu_module_mem"},
        replaced={"reserved_mb": reserved},
    )


def load_npu_mem(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read msprof npu_mem files into memory_records (source 'npu_mem'). Returns rows inserted."""
    return load_csv_table(
        con,
        paths,
        ctx,
        "memory_records",
        _NPU_MEM,
        "npu_mem (Device_id, event, ddr(KB), hbm(KB), memory(KB), timestamp(us))",
        constants={"source": "npu_mem"},
    )
