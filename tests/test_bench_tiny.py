"""The benchmark harness at tiny size: every step runs, the JSON has every row (no timings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.measure import Measurement, measure, median_of

ROOT = Path(__file__).resolve().parents[1]
ENGINE_TOOLS = (
    "npu-triage diagnose (json,md)",
    "npu-triage diagnose (json,md,html)",
    "npu-triage diagnose (json,md), NPU_TRIAGE_MEMORY_LIMIT=lean",
    "parse floor (DuckDB read_csv + read_json)",
)


def test_bench_tiny_run_writes_every_row(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "run.py"),
            "--tiny",
            "--skip-msprof-analyze",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    measured = {(r["layout"], r["size"], r["tool"]) for r in doc["rows"]}
    expected = {
        (layout, size, tool)
        for layout in ("torch_npu", "msprof")
        for size in ("1x", "5x")
        for tool in ENGINE_TOOLS
    }
    assert measured == expected
    assert all(
        r["exit_code"] == 0 and r["wall_s"] > 0 and r["peak_rss_mb"] > 0 for r in doc["rows"]
    )
    assert all(r["ratio_to_parse_floor"] is not None for r in doc["rows"])
    assert {(s["layout"], s["tool"]) for s in doc["scaling"]} == {
        (layout, tool) for layout in ("torch_npu", "msprof") for tool in ENGINE_TOOLS
    }
    assert "npu-triage benchmark" in proc.stdout
    # the lean rows have runs of their own, and lean's smallest budget was enough for the tiny
    # inputs: no run fell back to DuckDB's own limit
    lean_logs = sorted(out.glob("runs/*/diagnose_json_md_lean_1.log"))
    assert len(lean_logs) == 4 and not any("again" in p.read_text() for p in lean_logs)
    assert not list(out.glob("data/.*")), "a half-written input was left behind"


def test_repeated_runs_report_the_median_wall_the_largest_rss_and_a_failure() -> None:
    runs = [Measurement(3.0, 100.0, 0), Measurement(1.0, 300.0, 0), Measurement(2.0, 200.0, 0)]
    assert median_of(runs) == Measurement(2.0, 300.0, 0)
    assert median_of(runs[:2]).wall_s == 2.0  # an even count: the mean of the middle two
    assert median_of([*runs, Measurement(9.0, 50.0, 3)]).exit_code == 3


def test_peak_rss_is_in_the_unit_of_the_file_sizes(tmp_path: Path) -> None:
    """300 * 10^6 touched bytes read as at least 300 MB: in MiB (the kernel's KiB / 1024) they would
    be 286, and the RSS target (peak RSS / largest file, in MB) would be understated by 5%."""
    child = "b = bytearray(300_000_000); b[::4096] = b'x' * len(b[::4096])"
    m = measure([sys.executable, "-c", child], tmp_path / "child.log")
    assert m.exit_code == 0
    assert 300 <= m.peak_rss_mb < 300 + 60
