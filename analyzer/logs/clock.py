"""The log's clock on the profile's: the UTC offset of the log's local wall time, given or read from the export."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import duckdb

from analyzer.errors import TriageError

# Export folders name their start in the machine's local time, to the millisecond:
# torch_npu <name>_<YYYYMMDDhhmmssmmm>_ascend_pt, msprof PROF_<n>_<YYYYMMDDhhmmssmmm>_<id>.
_STAMP = re.compile(r"(?:_|PROF_\d+_)(\d{17})(?:_ascend_pt|_[A-Za-z0-9]+)?$")
_OFFSET = re.compile(r"^(?:UTC)?([+-])(\d{1,2}):?(\d{2})?$")
_QUARTER_H_MIN = 15


class ClockError(TriageError, ValueError):
    """An offset that is not +HH:MM / -HH:MM."""


def parse_offset(text: str) -> int:
    """Minutes east of UTC of '+08:00', '-0530', 'UTC+8'.

    >>> parse_offset("+08:00"), parse_offset("-0530"), parse_offset("UTC+8")
    (480, -330, 480)
    """
    m = _OFFSET.match(text.strip())
    if not m or int(m.group(2)) > 14 or int(m.group(3) or 0) >= 60:
        raise ClockError(f"--log-utc-offset {text!r}: give the log's UTC offset as +HH:MM or -HH:MM (e.g. +08:00)")
    minutes = int(m.group(2)) * 60 + int(m.group(3) or 0)
    return minutes if m.group(1) == "+" else -minutes


def format_offset(minutes: int) -> str:
    """'+08:00' of 480.

    >>> format_offset(480), format_offset(-330), format_offset(0)
    ('+08:00', '-05:30', '+00:00')
    """
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def export_offset(con: duckdb.DuckDBPyConnection, run_id: str) -> int | None:
    """The export's UTC offset in minutes: its folder's local start stamp against its first device task
    (UTC), rounded to a quarter hour; None when the folder name has no stamp or the run no task."""
    row = con.execute("SELECT source_path, start_ns FROM runs WHERE run_id = ?", [run_id]).fetchall()
    if not row or row[0][1] is None:
        return None
    names = [p for p in str(row[0][0] or "").replace("\\", "/").split("/") if p]
    stamp = next((m.group(1) for p in reversed(names) if (m := _STAMP.search(p))), None)
    if stamp is None:
        return None
    local = datetime.strptime(stamp[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC).timestamp() + int(stamp[14:]) / 1000
    minutes = (local - row[0][1] / 1e9) / 60
    return int(round(minutes / _QUARTER_H_MIN) * _QUARTER_H_MIN)


def choose_offset(con: duckdb.DuckDBPyConnection, run_ids: list[str], given: int | None) -> tuple[int, str]:
    """(offset minutes, the assumption in words) for placing log wall times on these runs' timeline."""
    if given is not None:
        return given, f"log wall time read as UTC{format_offset(given)} (--log-utc-offset)"
    found = sorted({o for r in run_ids if (o := export_offset(con, r)) is not None})
    if len(found) == 1:
        return found[0], (
            f"log wall time read as UTC{format_offset(found[0])}: the export folder's local start time against its "
            "first device task, rounded to a quarter hour (give --log-utc-offset to set it)"
        )
    return 0, "log wall time read as UTC: the export records no local start time (give --log-utc-offset to set it)"
