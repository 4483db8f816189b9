"""The shape of a CSV file seen from its first bytes and its last line: its header line, the cells of its
first rows, its line ends and whether its last row is complete."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

# Any line end: CRLF, LF or a lone CR (old Mac and some re-saved files).
_LINE_END = re.compile(rb"\r\n|\r|\n")
_TAIL_BYTES = 1 << 16


def header_line(data: bytes, encoding: str) -> str:
    """The first line of ``data`` as text, whatever its line end, without a BOM."""
    first = _LINE_END.split(data, 1)[0]
    return first.decode(encoding, errors="replace").lstrip("\ufeff")


def mixed_line_ends(data: bytes) -> bool:
    """Whether ``data`` ends lines in more than one way (CRLF beside a lone LF or CR), which DuckDB's strict
    parser cannot read."""
    if b"\r" not in data:  # a search that stops at the first CR; most files have none, and no CRLF then
        return False
    crlf = data.count(b"\r\n")
    return bool(crlf) and (data.count(b"\n") > crlf or data.count(b"\r") > crlf)


def sample_rows(data: bytes, encoding: str) -> list[list[str]]:
    """The cells of the complete data rows in ``data`` (a file's first bytes), header excluded; [] when
    they cannot be parsed as CSV."""
    text = data.decode(encoding, errors="replace")
    cut = max(text.rfind("\n"), text.rfind("\r"))
    text = text[: cut + 1] if cut >= 0 else ""
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error:
        return []
    return [r for r in rows[1:] if r]


def short_in_head(columns: int, data: bytes, encoding: str) -> int | None:
    """``short_rows`` of the header's ``columns`` and ``sample_rows(data, encoding)``, parsing only up to the
    first row as wide as the header (where real files stop at once): the same answer whatever follows."""
    text = data.decode(encoding, errors="replace")
    cut = max(text.rfind("\n"), text.rfind("\r"))
    reader = csv.reader(io.StringIO(text[: cut + 1] if cut >= 0 else "", newline=""))
    widest = None
    try:
        next(reader, None)  # the header
        for row in reader:
            if len(row) >= columns:
                return None
            widest = max(widest or 0, len(row)) if row else widest
    except csv.Error:  # sample_rows then has no rows at all
        return None
    return widest


def short_rows(header: list[str], rows: list[list[str]]) -> int | None:
    """The widest row's cell count when every sampled row has fewer cells than ``header`` (the header
    names a column the rows do not have, so every value would be read under its neighbour's name);
    else None. A few short rows among full ones are legal (real exports have them)."""
    widest = max((len(r) for r in rows), default=len(header))
    return widest if widest < len(header) else None


def ends_mid_row(path: Path, encoding: str, columns: int) -> bool:
    """Whether the file's last row is cut short: it lacks a final line break and has fewer cells than
    the header's ``columns`` (or an open quote). A complete last row without a line break is complete."""
    size = path.stat().st_size
    with path.open("rb") as fh:
        fh.seek(max(0, size - _TAIL_BYTES))
        tail = fh.read()
    if tail[-1:] in (b"\n", b"\r"):
        return False
    last = _LINE_END.split(tail)[-1].decode(encoding, errors="replace")
    if last.count('"') % 2:
        return True
    try:
        cells = next(csv.reader([last]), [])
    except csv.Error:
        return True
    return len(cells) < columns
