"""The operators whose task failed (Diagnosis.failed_operators) as the rows every renderer shows."""

from __future__ import annotations

from typing import Any

COLUMNS = (
    "operator",
    "type",
    "shapes (in -> out)",
    "device time (us)",
    "device / stream / task",
    "error",
    "meaning",
    "exception dump",
    "error records",
)
TITLE = "Failed operator (from the logs)"
INTRO = (
    "The logs' error records name the device task of this operator (by stream and task id, or by the "
    "faulting kernel's name); the log clock converted as the logs report says."
)


def row(op: dict[str, Any]) -> list[Any]:
    """One operator's cells, in COLUMNS order.

    >>> row({"op_name": "conv1", "op_type": "Conv2D", "input_shapes": "1,3", "output_shapes": "1,8",
    ...      "dur_us": 12.5, "device_id": 0, "stream_id": 4, "task_id": 9, "error_code": "AICORE_ERROR",
    ...      "kernel_name": "Conv2D_x", "meaning": "m", "dump_path": None, "record_count": 2,
    ...      "records": ["a.log:3"], "matched_by": "task", "log_run_id": "log"})[4:6]
    ['0 / 4 / 9 (matched by task)', 'AICORE_ERROR in kernel Conv2D_x']
    """
    where = " / ".join("?" if op.get(k) is None else str(op[k]) for k in ("device_id", "stream_id", "task_id"))
    kernel = f" in kernel {op['kernel_name']}" if op.get("kernel_name") else ""
    records = ", ".join(op.get("records") or [])
    return [
        op.get("op_name"),
        op.get("op_type"),
        f"{op.get('input_shapes') or '?'} -> {op.get('output_shapes') or '?'}",
        op.get("dur_us"),
        f"{where} (matched by {op.get('matched_by')})",
        f"{op.get('error_code') or 'no known code'}{kernel}",
        op.get("meaning") or "",
        op.get("dump_path") or "none written",
        f"{op.get('record_count')} in {op.get('log_run_id')}: {records} (first at {op.get('first_time')})",
    ]
