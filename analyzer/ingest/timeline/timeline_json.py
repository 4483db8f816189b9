"""Parse Chrome-trace JSON files (top-level array or {"traceEvents": [...]}) into one raw DuckDB event table.

The whole parse happens inside DuckDB's JSON reader, one pass per file, keeping only the fields
the timeline needs; ``args`` stays JSON text and is picked apart later only for the events that
need it. ``ts`` is read as DECIMAL(38,3) so both "1736408883688177.930" strings and bare numbers
stay exact to the nanosecond. A truncated array is salvaged up to its last complete event.
"""

from __future__ import annotations

import codecs
import itertools
import re
import tempfile
from pathlib import Path

import duckdb

from analyzer.errors import first_line
from analyzer.ingest.database import all_or_nothing
from analyzer.ingest.model import ReadContext
from analyzer.ingest.timeline.json_surrogates import copy_without_lone_surrogates
from analyzer.ingest.timeline.superseded_events import SupersededTasks

_counter = itertools.count()

# Raw event fields and how DuckDB should read them (unknown keys are skipped while parsing).
_FIELDS = {
    "ph": "VARCHAR",
    "name": "VARCHAR",
    "pid": "VARCHAR",
    "tid": "VARCHAR",
    "ts": "DECIMAL(38,3)",
    "dur": "DOUBLE",
    "cat": "VARCHAR",
    "id": "VARCHAR",
    "args": "JSON",
}
_STRUCT = "STRUCT(" + ", ".join(f"{k} {t}" for k, t in _FIELDS.items()) + ")"
_MAX_EVENT_BYTES = 16 << 20
_MAX_OBJECT_BYTES = (1 << 32) - 1
_TAIL_BYTES = 8 << 20
# Between two events of an array: where salvage cuts a truncated file.
EVENT_SEPARATOR = re.compile(rb"\}\s*,\s*\{")
_TRACE_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
_ARRAY_CLOSE = re.compile(rb'\]\s*(?=,\s*"|\}\s*$)')
# Why an array element cannot be used as it is, one bit each, counted by timeline._report_unusable_events.
# Set while parsing, so that the count reads one byte a row instead of four columns.
NOT_AN_EVENT, NO_TS, NO_DUR, NEGATIVE_DUR, NS_LIKE_TS, NEGATIVE_TS = 1, 2, 4, 8, 16, 32
# Epoch microseconds above this are nanoseconds written as microseconds. A DECIMAL literal: against
# 1e17 (a DOUBLE) DuckDB would cast every DECIMAL(38,3) ts to DOUBLE.
_MAX_EPOCH_US = "100000000000000000::DECIMAL(38,3)"
# args values that events other than metadata and counters need, in this order (see timeline_events.py):
# a host call's first, so that the events of tracks known to be host calls extract those alone.
HOST_ARG_PATHS = ("$.connection_id", "$.level")
ARG_PATHS = (
    *HOST_ARG_PATHS,
    '$."Physic Stream Id"',
    '$."Stream Id"',
    '$."Task Id"',
    '$."Task Type"',
    '$."stream id"',
    '$."task id"',
    '$."task type"',
)


def raw_table_columns() -> str:
    """The column list of a raw event table, for CREATE TABLE."""
    cols = ", ".join(f"{k} {t}" for k, t in _FIELDS.items())
    return f"file_no INTEGER, {cols}, arg_fields VARCHAR[], problems UTINYINT"


def create_raw_table(con: duckdb.DuckDBPyConnection) -> str:
    """An empty temp table for raw events of one reader call; returns its name."""
    name = f"_tl_raw_{next(_counter)}"
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} ({raw_table_columns()})")
    return name


def _kept_events(left_out: frozenset[str], skipped: bool = False) -> str:
    """The events a raw table needs when the timeline leaves ``left_out`` kinds out: flow events ('s',
    't', 'f': kind 'flow' whatever their process; often a third of a msprof trace's events), and with
    ``skipped`` the events of the tracks ``$skipped`` names (left-out processes, ``track_heads``), only
    when they have a problem to count."""
    kept = "(ph NOT IN ('s', 't', 'f') OR problems <> 0)" if "flow" in left_out else "true"
    return f"{kept} AND NOT ({_skipped_event('')} AND problems = 0)" if skipped else kept


def _skipped_event(event: str) -> str:
    """An event of a track of ``$skipped`` other than its metadata and counters: never a timeline row."""
    # an event without a pid is of no skipped track (list_contains would be NULL, and NULL drops the row)
    return f"(coalesce(list_contains($skipped, {event}pid), false) AND {event}ph NOT IN ('M', 'C'))"


def _kept_fields(event: str, left_out: frozenset[str] = frozenset(), skipped: bool = False, hosts: bool = False) -> str:
    """The raw columns to store: full args only for metadata and counters; for other events only the
    ARG_PATHS values (so megabytes of call stacks in Python events' args are never kept), only the
    HOST_ARG_PATHS ones for the events of the tracks ``$host_tracks`` names (with ``hosts``; a host call
    reads no other), none for the events of skipped tracks; ``id`` only when flows (the only events whose
    id is read) are kept."""
    plain = ", ".join(f"{event}{k}" for k in _FIELDS if k not in ("args", "id"))
    values = f"json_extract_string({event}args, {_paths(ARG_PATHS)})"
    if hosts:
        host_values = f"json_extract_string({event}args, {_paths(HOST_ARG_PATHS)})"
        values = f"CASE WHEN list_contains($host_tracks, {event}pid) THEN {host_values} ELSE {values} END"
    wanted = f"{event}ph NOT IN ('M', 'C')" + (f" AND NOT {_skipped_event(event)}" if skipped else "")
    flow_id = "NULL::VARCHAR" if "flow" in left_out else f"{event}id"
    return (
        f"{plain}, {flow_id} AS id, CASE WHEN {event}ph IN ('M', 'C') THEN {event}args END AS args, "
        f"CASE WHEN {wanted} THEN {values} END AS arg_fields, {_problem_bits(event)} AS problems"
    )


def _paths(paths: tuple[str, ...]) -> str:
    return "[" + ", ".join(f"'{p}'" for p in paths) + "]"


def _problem_bits(event: str) -> str:
    """The event's problem bits (NOT_AN_EVENT, ...), 0 for a usable event."""
    ph, ts, dur = f"{event}ph", f"{event}ts", f"{event}dur"
    tests = {
        NOT_AN_EVENT: f"{ph} IS NULL",
        NO_TS: f"{ph} <> 'M' AND {ts} IS NULL",
        NO_DUR: f"{ph} = 'X' AND {ts} IS NOT NULL AND ({dur} IS NULL OR NOT isfinite({dur}))",
        NEGATIVE_DUR: f"{ph} = 'X' AND {dur} < 0",
        NS_LIKE_TS: f"{ph} <> 'M' AND {ts} > {_MAX_EPOCH_US}",
        NEGATIVE_TS: f"{ph} <> 'M' AND {ts} < 0",
    }
    bits = " | ".join(f"CASE WHEN {test} THEN {bit} ELSE 0 END" for bit, test in tests.items())
    # Most events have none: one pass of plain compares settles them before the six tests.
    usable = (
        f"{ph} IS NOT NULL AND ({ph} = 'M' OR ({ts} >= 0 AND {ts} <= {_MAX_EPOCH_US} "
        f"AND ({ph} <> 'X' OR ({dur} >= 0 AND isfinite({dur})))))"
    )
    return f"(CASE WHEN {usable} THEN 0 ELSE {bits} END)::UTINYINT"


def first_char(path: Path) -> str | None:
    """First non-blank character of the file (BOM skipped), or None when there is none."""
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 16):
            stripped = chunk.lstrip(b" \t\r\n\xef\xbb\xbf")
            if stripped:
                return chr(stripped[0])
    return None


def insert_arrays(
    con: duckdb.DuckDBPyConnection,
    raw: str,
    paths: list[Path],
    file_no: int | None = None,
    strict: bool = False,
    left_out: frozenset[str] = frozenset(),
    skipped: tuple[str, ...] = (),
    superseded: SupersededTasks | None = None,
    hosts: tuple[str, ...] = (),
) -> None:
    """Append the events of top-level-array files in one read_json call (DuckDB parses files in
    parallel), all as ``file_no``, or each as its position in ``paths`` when ``file_no`` is None; of
    the events of ``left_out`` kinds and of the tracks (pids) ``skipped`` only those ``_kept_events`` keeps;
    without the device tasks ``superseded`` names; of the events of the host-call tracks ``hosts`` only
    the args values a host call reads (``_kept_fields``).

    Lenient by default (a field that does not cast is NULL); ``strict`` makes any such field, like
    any piece that does not parse, fail the whole INSERT, which then inserts nothing."""
    number = "$file_no" if file_no is not None else "file_index"
    params: dict[str, object] = {"files": [str(p) for p in paths]}
    if file_no is not None:
        params["file_no"] = file_no
    if skipped:
        params["skipped"] = list(skipped)
    if hosts:
        params["host_tracks"] = list(hosts)
    rows = (
        f"SELECT * FROM (SELECT file_no, {_kept_fields('', left_out, bool(skipped), bool(hosts))} FROM ("
        f"SELECT *, CAST({number} AS INTEGER) AS file_no FROM read_json($files, format='array', "
        f"records=true, columns={_columns(left_out)}, maximum_object_size={_MAX_EVENT_BYTES}, "
        f"ignore_errors={'false' if strict else 'true'}))) WHERE {_kept_events(left_out, bool(skipped))}"
    )
    if superseded is None:
        con.execute(f"INSERT INTO {raw} {rows}", params)
        return
    with all_or_nothing(con):  # the rows inserted and the superseded deleted, or nothing inserted
        con.execute(f"INSERT INTO {raw} {rows}", params)
        superseded.delete_from(con, raw)


def _columns(left_out: frozenset[str]) -> str:
    """read_json's columns: every raw field, less ``id`` when flows are left out (``_kept_fields``)."""
    fields = {k: t for k, t in _FIELDS.items() if not (k == "id" and "flow" in left_out)}
    return "{" + ", ".join(f"{k}: '{t}'" for k, t in fields.items()) + "}"


def read_arrays_at_once(
    con: duckdb.DuckDBPyConnection,
    raw: str,
    paths: tuple[Path, ...],
    ctx: ReadContext,
    skipped: tuple[str, ...] = (),
    superseded: SupersededTasks | None = None,
    hosts: tuple[str, ...] = (),
) -> bool:
    """Read several array files (msprof's slices) in one read_json call, which parses files in parallel;
    one file too when it has ``skipped`` tracks, ``superseded`` tasks or ``hosts`` tracks (``insert_arrays``).

    Returns False, having inserted nothing, when there is one file (and nothing left out), a file is not
    an array, or the read fails: the caller then reads the files one by one, with a diagnosis per file."""
    if len(paths) < (1 if skipped or superseded or hosts else 2):
        return False
    try:
        if any(first_char(p) != "[" for p in paths):
            return False
    except OSError:
        return False
    try:
        insert_arrays(
            con, raw, list(paths), left_out=ctx.left_out_kinds, skipped=skipped, superseded=superseded, hosts=hosts
        )
    except duckdb.Error:
        return False
    for path in paths:
        ctx.mark_read(path)
    return True


def _insert_object(con: duckdb.DuckDBPyConnection, raw: str, path: Path, file_no: int) -> None:
    """Read a {"traceEvents": [...]} file as one JSON object, parsed whole."""
    size = min(path.stat().st_size + 1024, _MAX_OBJECT_BYTES)
    con.execute(
        f"INSERT INTO {raw} SELECT ?::INTEGER AS file_no, {_kept_fields('e.')} FROM (SELECT unnest(traceEvents) AS e "
        f"FROM read_json(?, format='unstructured', records=true, columns={{traceEvents: '{_STRUCT}[]'}}, "
        f"maximum_object_size={size}, ignore_errors=true))",
        [file_no, str(path)],
    )


def _tail(path: Path) -> tuple[int, bytes]:
    size = path.stat().st_size
    start = max(0, size - _TAIL_BYTES)
    with path.open("rb") as fh:
        fh.seek(start)
        return start, fh.read()


def _salvage_cuts(path: Path) -> list[tuple[int, int, bytes]]:
    """Cuts just after the last few complete events of a truncated array: (start, end, closing bytes)."""
    start, tail = _tail(path)
    ends = [start + m.start() + 1 for m in EVENT_SEPARATOR.finditer(tail)]
    return [(0, end, b"]") for end in ends[::-1][:3]]


def _trace_events_cuts(path: Path) -> list[tuple[int, int, bytes]]:
    """Candidate byte spans of the traceEvents array inside a {"traceEvents": [...], ...} object."""
    with path.open("rb") as fh:
        head = fh.read(1 << 16)
    key = _TRACE_EVENTS_KEY.search(head)
    if key is None:
        return []
    start, tail = _tail(path)
    closes = [start + m.start() + 1 for m in _ARRAY_CLOSE.finditer(tail)]
    return [(key.end() - 1, close, b"") for close in closes[::-1][:3] if close > key.end()]


def _insert_cut(
    con: duckdb.DuckDBPyConnection, raw: str, path: Path, file_no: int, cuts: list[tuple[int, int, bytes]]
) -> tuple[int, int, bytes] | None:
    """Read the first candidate span of the file that parses as an event array (via a temp copy, never
    beside the export); returns the span used, or None when none parses."""
    with tempfile.TemporaryDirectory(prefix="npu_triage_") as tmp:
        cut_path = Path(tmp) / "events.json"
        for cut in cuts:
            begin, end, closing = cut
            with path.open("rb") as src, cut_path.open("wb") as dst:
                src.seek(begin)
                remaining = end - begin
                while remaining > 0 and (chunk := src.read(min(remaining, 8 << 20))):
                    dst.write(chunk)
                    remaining -= len(chunk)
                dst.write(closing)
            try:
                insert_arrays(con, raw, [cut_path], file_no)
                return cut
            except duckdb.Error:
                continue
    return None


def _insert_object_form(con: duckdb.DuckDBPyConnection, raw: str, path: Path, file_no: int) -> int:
    """The {"traceEvents": [...]} form: its array copied out and streamed like an array file when it can
    be located cheaply, else the whole object parsed at once (memory-hungry). Returns events read."""
    before = con.execute(f"SELECT count(*) FROM {raw}").fetchall()[0][0]
    if _insert_cut(con, raw, path, file_no, _trace_events_cuts(path)) is None:
        _insert_object(con, raw, path, file_no)
    return con.execute(f"SELECT count(*) FROM {raw}").fetchall()[0][0] - before


def _duckdb_message(exc: duckdb.Error) -> str:
    first = first_line(exc, None)
    return re.sub(r'in file "[^"]*",?\s*', "", first).replace("Invalid Input Error: ", "")[:300]


def read_raw_events(con: duckdb.DuckDBPyConnection, raw: str, path: Path, file_no: int, ctx: ReadContext) -> bool:
    """Append one file's events to the raw table; every problem is reported. True when something was read."""
    try:
        size = path.stat().st_size
        first = first_char(path) if size else None
    except OSError as exc:
        ctx.report(
            path, "", "error", f"cannot open the file: {exc.strerror or exc}", "check the path and its permissions"
        )
        return False
    if size == 0 or first is None:
        ctx.report(path, "", "error", f"empty file ({size} bytes)", "the profiler wrote no timeline here; re-export it")
        return False
    if first not in "[{":
        ctx.report(
            path,
            "byte 0",
            "error",
            f"not a JSON trace: starts with {first!r}, expected '[' or '{{'",
            "replace it with the exported trace_view.json / msprof_*.json",
        )
        return False
    try:
        if first == "[":
            insert_arrays(con, raw, [path], file_no, left_out=ctx.left_out_kinds)
        elif not _insert_object_form(con, raw, path, file_no):
            ctx.report(
                path,
                "",
                "warning",
                "JSON object with no events (no traceEvents array, or an empty one)",
                "a timeline is a JSON array of events or an object with a traceEvents array",
            )
            return False
    except duckdb.Error as exc:
        return _on_parse_error(con, raw, path, file_no, size, first, exc, ctx)
    ctx.mark_read(path)
    return True


def _on_parse_error(
    con: duckdb.DuckDBPyConnection,
    raw: str,
    path: Path,
    file_no: int,
    size: int,
    first: str,
    exc: duckdb.Error,
    ctx: ReadContext,
) -> bool:
    message = _duckdb_message(exc)
    if first == "[" and "unexpected end of data" in message:
        cut = _insert_cut(con, raw, path, file_no, _salvage_cuts(path))
        if cut is not None:
            kept = con.execute(f"SELECT count(*) FROM {raw} WHERE file_no = ?", [file_no]).fetchall()[0][0]
            ctx.report(
                path,
                f"byte {size}",
                "error",
                f"truncated JSON: the file ends mid-event at byte {size}; read the {kept} events "
                f"before byte {cut[1]} and dropped the rest",
                "re-export the timeline for the full data",
            )
            ctx.mark_read(path)
            return True
    if "invalid UTF-8" in message:
        return _read_utf8_repaired(con, raw, path, file_no, first, ctx)
    if _read_without_lone_surrogates(con, raw, path, file_no, first, ctx):
        return True
    where = f"byte {size}" if "unexpected end of data" in message else ""
    ctx.report(
        path,
        where,
        "error",
        f"could not be parsed as a JSON trace: {message}",
        "the file is skipped; check that it is a complete trace_view.json / msprof_*.json",
    )
    return False


def _read_without_lone_surrogates(
    con: duckdb.DuckDBPyConnection, raw: str, path: Path, file_no: int, first: str, ctx: ReadContext
) -> bool:
    """A trace holding lone surrogate escapes (a non-UTF-8 path in a call stack), which DuckDB's parser
    rejects with the whole array: read a temporary copy with each replaced by U+FFFD. False (nothing
    read, nothing reported) when the file holds none or the copy does not parse either."""
    with tempfile.TemporaryDirectory(prefix="npu_triage_") as tmp:
        copy = Path(tmp) / "events.json"
        replaced = copy_without_lone_surrogates(path, copy)
        if not replaced:
            return False
        try:
            if first == "[":
                insert_arrays(con, raw, [copy], file_no)
            else:
                _insert_object_form(con, raw, copy, file_no)
        except duckdb.Error:
            return False
    ctx.report(
        path,
        "",
        "warning",
        f"{replaced} lone UTF-16 surrogate escapes (e.g. \\udcff, a non-UTF-8 byte of a path) read as U+FFFD; "
        "every event is kept",
        "names or call stacks holding them show a replacement character",
    )
    ctx.mark_read(path)
    return True


def _read_utf8_repaired(
    con: duckdb.DuckDBPyConnection, raw: str, path: Path, file_no: int, first: str, ctx: ReadContext
) -> bool:
    """A trace holding non-UTF-8 bytes (e.g. a GBK or Latin-1 op name): read a temporary copy in which
    each invalid byte is replaced by U+FFFD, instead of losing the whole file."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "events.json"
        replaced = 0
        with path.open("rb") as src, copy.open("w", encoding="utf-8") as dst:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                text = decoder.decode(chunk)
                replaced += text.count("\ufffd")
                dst.write(text)
            dst.write(decoder.decode(b"", final=True))
        try:
            if first == "[":
                insert_arrays(con, raw, [copy], file_no)
            else:
                _insert_object_form(con, raw, copy, file_no)
        except duckdb.Error as exc:
            ctx.report(
                path,
                "",
                "error",
                f"could not be parsed as a JSON trace: {_duckdb_message(exc)}",
                "the file is skipped; check that it is a complete trace_view.json / msprof_*.json",
            )
            return False
    ctx.report(
        path,
        "",
        "warning",
        f"not UTF-8 text: {replaced} invalid bytes read as U+FFFD",
        "names holding them are shown with a replacement character; re-save the trace as UTF-8",
    )
    ctx.mark_read(path)
    return True
