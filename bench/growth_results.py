"""Growth rows -> ratios to the parse floor and msprof-analyze, slopes per axis and tool, the issue's targets."""

from __future__ import annotations

from typing import Any

from bench.growth_commands import BASE, ENGINE_TOOLS, FLOOR, MSPROF, NPU
from bench.growth_fit import MAX_SLOPE, fits, loglog_slope
from bench.results import _check

AXES = ("kernels", "gaps", "runs", "ranks")
# diagnose exits 1 when a finding reaches --fail-on: it finished its work all the same.
OK_EXIT = {NPU: (0, 1), BASE: (0, 1), FLOOR: (0,), MSPROF: (0,)}
BOTH_CORES_CPU_PCT = 150  # CPU time over wall time: well past one core's 100%


def finished(row: dict[str, Any]) -> bool:
    return row["exit_code"] in OK_EXIT.get(row["tool"], (0,))


def with_ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with ratio_to_floor and ratio_to_msprof (wall time over the reference's on the same input)
    and cpu_ratio_to_floor (CPU time over the floor's: steadier on a loaded machine)."""
    ref = {(r["axis"], r["size"], r["tool"]): r for r in rows if finished(r)}

    def ratio(row: dict[str, Any], tool: str, key: str = "wall_s") -> float | None:
        other = ref.get((row["axis"], row["size"], tool))
        return round(row[key] / other[key], 3) if other and other[key] and row["tool"] != tool else None

    return [
        {
            **r,
            "ratio_to_floor": ratio(r, FLOOR),
            "cpu_ratio_to_floor": ratio(r, FLOOR, "cpu_s"),
            "ratio_to_msprof": ratio(r, MSPROF),
        }
        for r in rows
    ]


def slopes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per axis and tool (finished runs only): the log-log slopes of wall and CPU time over every size
    and over the largest ones, of peak RSS over every size; ``defect`` names the times (wall, CPU) of
    which an engine's slope exceeds MAX_SLOPE."""
    out = []
    for axis in AXES:
        for tool in (NPU, BASE, FLOOR, MSPROF):
            mine = [r for r in rows if r["axis"] == axis and r["tool"] == tool and finished(r)]
            if len(mine) >= 2:
                out.append({"axis": axis, "tool": tool, **_fitted(mine, tool in ENGINE_TOOLS)})
    return out


def _fitted(rows: list[dict[str, Any]], engine: bool) -> dict[str, Any]:
    wall, wall_tail = fits([(r["size"], r["wall_s"]) for r in rows])
    cpu, cpu_tail = fits([(r["size"], r["cpu_s"]) for r in rows])
    defect = [
        name for name, pair in (("wall", (wall, wall_tail)), ("CPU", (cpu, cpu_tail))) if any(f.defect for f in pair)
    ]
    return {
        "sizes": list(wall.sizes),
        "slope": _round(wall.slope),
        "tail_sizes": list(wall_tail.sizes),
        "tail_slope": _round(wall_tail.slope),
        "cpu_slope": _round(cpu.slope),
        "cpu_tail_slope": _round(cpu_tail.slope),
        "rss_slope": _round(loglog_slope([(r["size"], r["peak_rss_mb"]) for r in rows])),
        "defect": defect if engine else [],
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def targets(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Issue 44's acceptance bars that the measured sizes reach (this checkout's npu-triage)."""
    by = {(r["axis"], r["size"], r["tool"]): r for r in with_ratios(rows)}
    checks = []
    job = by.get(("ranks", 1024, NPU))
    if job:
        checks.append(_check("1,024 ranks", "diagnose within 0.5x msprof-analyze", job["ratio_to_msprof"], 0.5))
        checks.append(_check("1,024 ranks", "peak RSS MB under 1,000", job["peak_rss_mb"], 1000))
        both = f"CPU % >= {BOTH_CORES_CPU_PCT} (both cores)"
        checks.append(_check("1,024 ranks", both, job["cpu_pct"], BOTH_CORES_CPU_PCT, at_least=True))
    big = by.get(("ranks", 4096, NPU))
    if big:
        checks.append(_check("4,096 ranks", "peak RSS MB under 2,000", big["peak_rss_mb"], 2000))
    batch = by.get(("runs", 200, NPU))
    if batch:
        checks.append(_check("200 runs", f"batch {FLOOR_TARGET}", _floor_ratio(batch), 2))
        if batch.get("same_catalog") is not None:
            same = float(batch["same_catalog"])
            checks.append(_check("200 runs", "catalog identical to the baseline's", same, 1, at_least=True))
    checks += _gap_targets(by)
    return checks


FLOOR_TARGET = "within 2x the parse floor (the larger of the wall and the CPU time ratios)"


def _floor_ratio(row: dict[str, Any]) -> float | None:
    """Judged on both ratios: on a loaded machine the floor's wall time can swell alone and flatter us."""
    ratios = [r for r in (row["ratio_to_floor"], row["cpu_ratio_to_floor"]) if r is not None]
    return max(ratios) if ratios else None


def _gap_targets(by: dict[tuple, dict[str, Any]]) -> list[dict[str, Any]]:
    gaps, floor = by.get(("gaps", 200_000, NPU)), by.get(("gaps", 200_000, FLOOR))
    if not gaps or not floor:
        return []
    rss = round(gaps["peak_rss_mb"] / floor["peak_rss_mb"], 3)
    return [
        _check("200,000 gaps", f"diagnose {FLOOR_TARGET}", _floor_ratio(gaps), 2),
        _check("200,000 gaps", "peak RSS within 1.5x the parse floor's", rss, 1.5),
    ]


def defects(slope_rows: list[dict[str, Any]]) -> list[str]:
    """One line per engine axis whose wall or CPU time grows with a slope above MAX_SLOPE."""
    return [
        f"{s['axis']}, {s['tool']}: {_slope_text(s, '')} of wall time, {_slope_text(s, 'cpu_')} of CPU time "
        f"(limit {MAX_SLOPE})"
        for s in slope_rows
        if s["defect"]
    ]


def _slope_text(s: dict[str, Any], prefix: str) -> str:
    tail = s[f"{prefix}tail_slope"]
    every = f"slope {s[f'{prefix}slope']} over every size"
    return every if tail is None else f"{every}, {tail} over the largest {len(s['tail_sizes'])}"
