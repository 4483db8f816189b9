"""Chrome-trace events of every shape, for the tests of the timeline readers that cut files."""

from __future__ import annotations

import json
import re
from pathlib import Path

SEPARATOR = re.compile(rb"\}\s*,\s*\{")  # where the readers cut a file


def meta(pid: int, name: str) -> dict:
    """A process_name metadata event."""
    return {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}}


def trace_events(repeat: int) -> list[dict]:
    """Metadata first (4 events), then ``repeat`` times 4 X / counter / flow events with args of
    every shape (nested arrays of objects, call stacks, non-ASCII names)."""
    events = [
        meta(7, "Python"),
        meta(11, "Ascend Hardware"),
        meta(15, "HBM"),
        {"ph": "M", "name": "thread_name", "pid": 11, "tid": 2, "args": {"name": "Stream 2"}},
    ]
    for i in range(repeat):
        ts = f"1736408883{i:06d}.{i % 1000:03d}"
        events += [
            {
                "ph": "X",
                "name": f"aten::add_{i} 加",
                "pid": 7,
                "tid": 1,
                "ts": ts,
                "dur": 5.25 + i,
                "args": {
                    "Call stack": "a.py(1): f;\r\nb.py(2): g",
                    "inputs": [{"a": i}, {"b": [i, {}]}],
                },
            },
            {
                "ph": "X",
                "name": "add_kernel",
                "pid": 11,
                "tid": 2,
                "ts": ts,
                "dur": 2.5,
                "args": {
                    "Task Type": "AI_CORE",
                    "Physic Stream Id": 2,
                    "Task Id": i,
                    "connection_id": i,
                },
            },
            {
                "ph": "C",
                "name": "HBM 1/Write",
                "pid": 15,
                "tid": 0,
                "ts": ts,
                "args": {"Write(MB/s)": i / 3},
            },
            {
                "ph": "s",
                "name": f"HostToDevice{i}",
                "cat": "HostToDevice",
                "id": str(i),
                "pid": 7,
                "tid": 1,
                "ts": ts,
            },
        ]
    return events


def string_across_the_middle(tmp_path: Path, filler: str) -> Path:
    """A trace_view.json of events around one whose long name holds ``filler``, placed so that the
    first separator after the file's midpoint (where a file is cut in two) is inside that name."""
    trap = {
        "ph": "X",
        "name": "x" * 3000 + filler + "y",
        "pid": 7,
        "tid": 1,
        "ts": "1.000",
        "dur": 1.0,
    }
    text = json.dumps([*trace_events(8), trap, *trace_events(8)]).encode()
    name_at = text.index(b'"xxx')
    middle = len(text) // 2
    cut = SEPARATOR.search(text, middle)
    assert name_at < middle < cut.start() < name_at + len(json.dumps(trap["name"]))
    path = tmp_path / "trace_view.json"
    path.write_bytes(text)
    return path
