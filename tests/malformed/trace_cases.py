"""Malformed trace_view.json cases: lone surrogates (as bytes and escaped), negative times and durations."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.malformed.base_exports import OPS, trace_bytes, trace_events
from tests.malformed.cases import TV, case, torch

# ---- trace_view.json --------------------------------------------------------


def _trace_with(edit: Callable[[list[dict]], list[dict]]) -> Callable[[Path], Path]:
    return lambda d: torch(d, {TV: trace_bytes(edit(trace_events()))}, ("trace_view.json",))


def _surrogate(folder: Path) -> Path:
    events = trace_events()
    events[5] = {**events[5], "args": {**events[5]["args"], "Call stack": "/home/\udcff/train.py(12)"}}
    data = json.dumps(events, ensure_ascii=False).encode("utf-8", "surrogateescape")
    return torch(folder, {TV: data}, ("trace_view.json",))


def _surrogate_escaped(folder: Path) -> Path:
    events = trace_events()
    events[6] = {**events[6], "name": "Conv\udcff"}
    return torch(folder, {TV: json.dumps(events).encode()}, ("trace_view.json",))


case("tv_lone_surrogate_bytes_in_call_stack", "usable", "trace_view.json", kind="json-surrogate", says="not UTF-8")(
    _surrogate
)
case(
    "tv_lone_surrogate_escaped_in_name",
    "usable",
    "trace_view.json",
    kind="json-surrogate",
    says="surrogate",
    tasks=len(OPS),
)(_surrogate_escaped)
case(
    "tv_negative_ts",
    "usable",
    "trace_view.json",
    kind="json-negative-times",
    says="negative",
)(_trace_with(lambda ev: [{**e, "ts": "-5.000"} if i == 6 else e for i, e in enumerate(ev)]))
case(
    "tv_negative_dur",
    "usable",
    "trace_view.json",
    kind="json-negative-times",
    says="negative 'dur'",
)(_trace_with(lambda ev: [{**e, "dur": -3.5} if i == 7 else e for i, e in enumerate(ev)]))
