"""Render an Arrow table of query rows as CSV, JSON, TSV or a rich table (for `query`, `runs` and pipes)."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import TYPE_CHECKING, Any

from rich.table import Table

from analyzer.visible_text import visible

if TYPE_CHECKING:  # the rows come as Arrow tables; a command writing TSV lines only never loads pyarrow
    import pyarrow as pa


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6g}"
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    return str(value)


def rows_csv(table: pa.Table) -> str:
    """CSV with a header line; NULL is an empty cell."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(table.column_names)
    for row in table.to_pylist():
        writer.writerow([_cell(v) for v in row.values()])
    return buf.getvalue()


def tsv_line(values: list[Any]) -> str:
    r"""One TSV line: cells as in CSV, tabs and line breaks inside a cell turned into spaces, other control
    characters shown as \xNN (visible_text.py).

    >>> tsv_line(["run/a", 1.5, None, "x\ty", "\x1b[2J"])
    'run/a\t1.5\t\tx y\t\\x1b[2J\n'
    """
    cells = (" ".join(_cell(v).split("\t")).replace("\r", " ").replace("\n", " ") for v in values)
    return "\t".join(visible(cell) for cell in cells) + "\n"


def rows_tsv(table: pa.Table) -> str:
    """TSV with a header line, one line per row, never a truncated cell; NULL is an empty cell."""
    lines = [tsv_line(table.column_names)]
    lines += [tsv_line(list(row.values())) for row in table.to_pylist()]
    return "".join(lines)


def rows_json(table: pa.Table) -> str:
    """A JSON array of objects, one per row."""
    return json.dumps(table.to_pylist(), indent=2, default=str) + "\n"


def rows_rich(table: pa.Table, title: str | None = None) -> Table:
    """A rich table of the rows."""
    out = Table(title=title, show_lines=False)
    for name in table.column_names:
        out.add_column(name, overflow="ellipsis")  # words wrap whole; one too long is cut
    for row in table.to_pylist():
        out.add_row(*[_cell(v) for v in row.values()])
    return out
