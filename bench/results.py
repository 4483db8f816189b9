"""Benchmark rows -> ratios, scaling, target checks, the printed table and the results JSON."""

from __future__ import annotations

import json
import os
import platform
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from analyzer.atomic_files import write_text_atomically

DIAGNOSE = "npu-triage diagnose (json,md)"
DIAGNOSE_HTML = "npu-triage diagnose (json,md,html)"
# The same as DIAGNOSE under a small memory limit: DuckDB spills, the diagnosis must not change.
# DIAGNOSE and DIAGNOSE_HTML run with the default limit, as a user runs them.
LIMIT = "512MB"
DIAGNOSE_LIMITED = f"npu-triage diagnose (json,md), --memory-limit {LIMIT}"
LIMITED_RSS_MB = 800
FLOOR = "parse floor (DuckDB read_csv + read_json)"
MSPROF = "msprof-analyze advisor all"
# msprof-analyze runs up to --repeat times per input, but stops once its runs of that input have
# taken this long (it is one to two orders of magnitude slower than the engine).
MSPROF_BUDGET_S = 300.0
# An export whose every gap holds a host event: finding the gaps' causes must stay a sweep (issue 44).
HOST_GAPS_FLOOR_RATIO = 2
TOOLS = (DIAGNOSE, DIAGNOSE_HTML, DIAGNOSE_LIMITED, FLOOR, MSPROF)
ENGINE = (DIAGNOSE, DIAGNOSE_HTML, DIAGNOSE_LIMITED)


@dataclass(frozen=True)
class Row:
    """One measured (input, tool) pair."""

    input: str
    layout: str
    size: str
    tasks: int
    largest_file_mb: float
    input_mb: float
    tool: str
    wall_s: float
    peak_rss_mb: float
    exit_code: int
    wall_s_runs: list[float]  # every run's wall time; wall_s is their median
    # DIAGNOSE_LIMITED only: its diagnosis.json and .md equal DIAGNOSE's, byte for byte
    same_diagnosis: bool | None = None


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def _times_faster(wall: float, reference: float | None) -> float | None:
    """How many times faster than ``reference`` (from the unrounded times: 1 / the 3-decimal ratio
    would be off by up to 1.6% near 30x, e.g. 29.9x shown as 30.3x)."""
    return round(reference / wall, 1) if reference is not None and wall > 0 else None


def with_ratios(rows: list[Row]) -> list[dict[str, Any]]:
    """Rows as dicts with ratio_to_msprof_analyze and ratio_to_parse_floor (wall / reference), and
    times_faster_than_msprof_analyze (reference / wall)."""
    ref = {(r.input, r.tool): r.wall_s for r in rows}
    return [
        {
            **asdict(r),
            "ratio_to_msprof_analyze": _ratio(r.wall_s, ref.get((r.input, MSPROF))),
            "times_faster_than_msprof_analyze": _times_faster(r.wall_s, ref.get((r.input, MSPROF))),
            "ratio_to_parse_floor": _ratio(r.wall_s, ref.get((r.input, FLOOR))),
        }
        for r in rows
    ]


def scaling(rows: list[Row]) -> list[dict[str, Any]]:
    """Per layout and tool: time and peak RSS at 5x the input over 1x."""
    by_key = {(r.layout, r.size, r.tool): r for r in rows}
    out = []
    for layout in sorted({r.layout for r in rows}):
        for tool in TOOLS:
            one, five = by_key.get((layout, "1x", tool)), by_key.get((layout, "5x", tool))
            if one and five:
                out.append(
                    {
                        "layout": layout,
                        "tool": tool,
                        "tasks_1x": one.tasks,
                        "tasks_5x": five.tasks,
                        "time_ratio": _ratio(five.wall_s, one.wall_s),
                        "rss_ratio": _ratio(five.peak_rss_mb, one.peak_rss_mb),
                    }
                )
    return out


def targets(rows: list[Row], scale: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The issue's targets, each with the measured value and whether it is met."""
    ratios = with_ratios(rows)
    checks = []
    floor_rss = {r["input"]: r["peak_rss_mb"] for r in ratios if r["tool"] == FLOOR}
    for r in ratios:
        if r["tool"] == DIAGNOSE and r["times_faster_than_msprof_analyze"]:
            checks.append(
                _check(
                    r["input"],
                    f"{r['tool']} >= 30x faster than msprof-analyze",
                    r["times_faster_than_msprof_analyze"],
                    30,
                    at_least=True,
                )
            )
        if r["tool"] in (DIAGNOSE, DIAGNOSE_HTML) and r["ratio_to_parse_floor"] is not None:
            limit = 5 if r["tool"] == DIAGNOSE_HTML else HOST_GAPS_FLOOR_RATIO if r["size"] == "host-gaps" else 3
            checks.append(
                _check(
                    r["input"],
                    f"{r['tool']} within {limit}x the parse floor",
                    r["ratio_to_parse_floor"],
                    limit,
                )
            )
        if r["tool"] == DIAGNOSE and floor_rss.get(r["input"]):
            checks.append(
                _check(
                    r["input"],
                    f"{r['tool']} peak RSS <= 1.5x the parse floor's",
                    _ratio(r["peak_rss_mb"], floor_rss[r["input"]]),
                    1.5,
                )
            )
        if r["tool"] == DIAGNOSE_LIMITED:
            checks.append(_check(r["input"], f"{r['tool']} peak RSS MB", r["peak_rss_mb"], LIMITED_RSS_MB))
            same = r.get("same_diagnosis")
            checks.append(_check(r["input"], f"{r['tool']}: diagnosis identical", float(bool(same)), 1, at_least=True))
    for s in scale:
        if s["tool"] in ENGINE:
            checks.append(
                _check(
                    s["layout"],
                    f"{s['tool']}: 5x the input costs <= 5.5x the time",
                    s["time_ratio"],
                    5.5,
                )
            )
    return checks


def _check(subject: str, target: str, value: float | None, limit: float, at_least: bool = False) -> dict[str, Any]:
    met = value is not None and (value >= limit if at_least else value <= limit)
    return {"subject": subject, "target": target, "value": value, "limit": limit, "met": met}


def machine() -> dict[str, Any]:
    """nproc, memory, CPU model and the UTC date of the measurement."""
    cpu = next(
        (line.split(":", 1)[1].strip() for line in _lines("/proc/cpuinfo") if line.startswith("model name")),
        platform.processor() or "unknown",
    )
    mem_kb = next((int(line.split()[1]) for line in _lines("/proc/meminfo") if line.startswith("MemTotal")), 0)
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "nproc": os.cpu_count(),
        "memory_gb": round(mem_kb / 1024 / 1024, 1),
        "cpu": cpu,
        "python": platform.python_version(),
    }


def _lines(path: str) -> list[str]:
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


def _derived(rows: list[Row]) -> dict[str, Any]:
    """What a results document derives from its measured rows: ratios, scaling, target checks."""
    scale = scaling(rows)
    return {"rows": with_ratios(rows), "scaling": scale, "targets": targets(rows, scale)}


def results_document(rows: list[Row], tiny: bool, total_s: float) -> dict[str, Any]:
    return {"tiny": tiny, "machine": machine(), "total_run_s": round(total_s, 1), **_derived(rows)}


def recomputed_document(document: dict[str, Any]) -> dict[str, Any]:
    """A results document with its ratios, scaling and target checks derived again from its
    measured rows (the machine, date and run counts kept), so that a docs section regenerated
    from an older results.json follows the current rules of derivation."""
    names = [f.name for f in fields(Row)]
    return {**document, **_derived([Row(**{n: row[n] for n in names if n in row}) for row in document["rows"]])}


def write_json_atomically(path: Path, document: dict[str, Any]) -> None:
    write_text_atomically(path, json.dumps(document, indent=2) + "\n")
