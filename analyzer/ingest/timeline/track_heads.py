"""The process_name events at the head of a trace's files: the tracks a load leaves out, known before the read.

A profiler writes its metadata events first, so the first bytes of each file name its processes. The
events of a process whose timeline kind is left out (msprof's 'Overlap Analysis': a third of its
events) are then never stored (``timeline_json.insert_arrays``), nor the device tasks the task_time
CSVs supersede (``superseded_events``) on the device tracks they name, nor args values a host call
does not read on the host-call tracks they name. The heads are only a hint:
``tracks_named`` checks them against every process_name event read, and the reader reads again
without skipping when a head misled it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb

from analyzer.ingest.timeline.timeline_events import PROCESS_KINDS

_HEAD_BYTES = 1 << 20
# A flat event object naming process_name, its args object nested once (metadata events are written so).
_EVENT = re.compile(rb'\{[^{}]*"process_name"[^{}]*(?:\{[^{}]*\}[^{}]*)?\}')


def head_tracks(paths: tuple[Path, ...]) -> dict[str, str]:
    """pid (as the raw table's text) -> process name, of the pids the heads of ``paths`` name by one name."""
    found: dict[str, set[str]] = {}
    for path in paths:
        for pid, process in _process_names(path):
            found.setdefault(pid, set()).add(process)
    return {pid: next(iter(p)) for pid, p in sorted(found.items()) if len(p) == 1}


def skipped_tracks(heads: dict[str, str], left_out: frozenset[str]) -> dict[str, str]:
    """The ``head_tracks`` whose kind is in ``left_out``. 'Python' never: its step markers are a kind of their own."""
    return {pid: p for pid, p in heads.items() if PROCESS_KINDS.get(p) in left_out and p != "Python"}


def tracks_of_kind(heads: dict[str, str], kind: str) -> dict[str, str]:
    """The ``head_tracks`` whose events are of the timeline kind ``kind``: device tasks (``superseded_events``),
    host calls (``timeline_json.insert_arrays``)."""
    return {pid: p for pid, p in heads.items() if PROCESS_KINDS.get(p) == kind}


def _process_names(path: Path) -> list[tuple[str, str]]:
    """(pid, process name) of the process_name metadata events in the file's first MiB."""
    try:
        with path.open("rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError:
        return []
    found = []
    for match in _EVENT.finditer(head):
        try:
            event = json.loads(match.group())
        except ValueError:
            continue
        pid, args = event.get("pid"), event.get("args")
        if event.get("ph") != "M" or event.get("name") != "process_name" or not isinstance(args, dict):
            continue
        # the raw table's pid is DuckDB's text of the JSON value: the same for integers and strings
        if isinstance(pid, (int, str)) and not isinstance(pid, bool) and isinstance(args.get("name"), str):
            found.append((str(pid), args["name"]))
    return found


def tracks_named(con: duckdb.DuckDBPyConnection, raw: str, skipped: dict[str, str]) -> bool:
    """Whether every pid of ``skipped`` (tracks a read left out, or left some events of out) has
    process_name events in the raw table and each names the process its head named (a head may have
    matched text that is no metadata event of the file)."""
    return not con.execute(
        f"SELECT count(*) FROM (SELECT unnest($pids) AS pid, unnest($names) AS process) s LEFT JOIN "
        f"(SELECT pid, json_extract_string(args, '$.name') AS process FROM {raw} "
        "WHERE ph = 'M' AND name = 'process_name') r ON r.pid = s.pid WHERE r.process IS DISTINCT FROM s.process",
        {"pids": list(skipped), "names": list(skipped.values())},
    ).fetchall()[0][0]
