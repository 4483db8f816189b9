"""The batch-size sweep for the terminal: one rich table with readable headers and fixed number formats."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
from rich.markup import escape
from rich.table import Table


def _plain(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _share(v: float) -> str:
    return f"{v:.1%}"


def _us(v: float) -> str:
    return f"{v:,.1f}"


# column -> (header, format of a non-NULL value, right-aligned); a column not listed keeps its name
# with spaces for underscores
_COLUMNS: dict[str, tuple[str, Callable[[Any], str], bool]] = {
    "model_name": ("model", str, False),
    "batch_size": ("batch size", str, True),
    "run_id": ("run", str, False),
    "cann_version": ("CANN", str, False),
    "busy_ratio": ("device busy", _share, True),
    "step_time_us": ("step us", _us, True),
    "per_sample_us": ("us per sample", _us, True),
    "throughput_samples_per_s": ("samples/s", _us, True),
}


def sweep_table(rows: pa.Table, title: str = "batch-size scaling") -> Table:
    """The scaling rows (analyzer.metrics.sweep.scaling_tables) as a rich table; words wrap whole,
    one too long for its column ends in an ellipsis."""
    table = Table(title=title, title_justify="left")
    formats = []
    for name in rows.column_names:
        header, fmt, right = _COLUMNS.get(name, (name.replace("_", " "), _plain, False))
        table.add_column(header, justify="right" if right else "left", overflow="ellipsis")
        formats.append(fmt)
    for row in rows.to_pylist():
        table.add_row(*(escape("" if v is None else f(v)) for f, v in zip(formats, row.values(), strict=True)))
    return table
