"""The memory peak table's columns and cells (a row per device and series), shared by the run page and diagnosis.md."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# What to switch on when an export has no memory records (both reports say it; this module loads no polars, so
# the Markdown report can import it cheaply).
COLLECT_MEMORY = "memory records: torch_npu profile_memory=True (memory_record.csv, operator_memory.csv)"

PEAK_COLUMNS = (
    "device",
    "series",
    "peak allocated",
    "peak reserved",
    "allocated at reserved peak (MB)",
    "process reserved (MB)",
    "device memory (MB)",
)


def peak_at(mb: float | None, ms: float | None, share: float | None, *, missing: str, no_share: str) -> str:
    """'1,261.0 MB at 38.247 ms (1.9% of the device)'; ``missing`` without a peak, ``no_share`` for an unknown share.

    >>> peak_at(1261.0, 38.2471, 0.0193, missing="", no_share="?")
    '1,261.0 MB at 38.247 ms (1.9% of the device)'
    """
    if mb is None:
        return missing
    return f"{mb:,.1f} MB at {ms:,.3f} ms ({no_share if share is None else f'{share:.1%}'} of the device)"


def peak_cells(row: Mapping[str, Any], device: Any, series: Any, process_reserved: Any, **at: str) -> list[Any]:
    """One row of the table from a peak's fields (peak_allocated_mb/_ms, allocated_share, the same for reserved,
    allocated_at_reserved_mb, device_memory_mb); ``at`` are peak_at's placeholders."""
    return [
        device,
        series,
        peak_at(row["peak_allocated_mb"], row["peak_allocated_ms"], row["allocated_share"], **at),
        peak_at(row["peak_reserved_mb"], row["peak_reserved_ms"], row["reserved_share"], **at),
        row["allocated_at_reserved_mb"],
        process_reserved,
        row["device_memory_mb"],
    ]
