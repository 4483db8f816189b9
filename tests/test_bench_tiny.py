"""The benchmark harness at tiny size: every step runs, the JSON has every row (no timings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.measure import Measurement, measure, median_of
from bench.results import (
    DIAGNOSE,
    FLOOR,
    MSPROF,
    Row,
    recomputed_document,
    results_document,
    scaling,
    targets,
    with_ratios,
)

ROOT = Path(__file__).resolve().parents[1]
ENGINE_TOOLS = (
    "npu-triage diagnose (json,md)",
    "npu-triage diagnose (json,md,html)",
    "npu-triage diagnose (json,md), --memory-limit 512MB",
    "parse floor (DuckDB read_csv + read_json)",
)


@pytest.mark.slow
def test_bench_tiny_run_writes_every_row(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "run.py"),
            "--tiny",
            "--layouts",
            "msprof",  # one layout: the harness does the same for each (both are generated and read elsewhere)
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
    expected = {("msprof", size, tool) for size in ("1x", "5x") for tool in ENGINE_TOOLS}
    assert measured == expected
    assert all(r["exit_code"] == 0 and r["wall_s"] > 0 and r["peak_rss_mb"] > 0 for r in doc["rows"])
    assert all(r["ratio_to_parse_floor"] is not None for r in doc["rows"])
    assert {(s["layout"], s["tool"]) for s in doc["scaling"]} == {("msprof", tool) for tool in ENGINE_TOOLS}
    assert "npu-triage benchmark" in proc.stdout
    # the limited rows have runs of their own, and wrote the same diagnosis as the default ones
    assert len(list(out.glob("runs/*/diagnose_json_md_512MB_1.log"))) == 2
    limited = [r for r in doc["rows"] if "--memory-limit" in r["tool"]]
    assert len(limited) == 2 and all(r["same_diagnosis"] for r in limited)
    assert not list(out.glob("data/.*")), "a half-written input was left behind"


def test_repeated_runs_report_the_median_wall_the_largest_rss_and_a_failure() -> None:
    runs = [Measurement(3.0, 100.0, 0), Measurement(1.0, 300.0, 0), Measurement(2.0, 200.0, 0)]
    assert median_of(runs) == Measurement(2.0, 300.0, 0)
    assert median_of(runs[:2]).wall_s == 2.0  # an even count: the mean of the middle two
    assert median_of([*runs, Measurement(9.0, 50.0, 3)]).exit_code == 3


@pytest.mark.slow
def test_peak_rss_is_in_the_unit_of_the_file_sizes(tmp_path: Path) -> None:
    """300 * 10^6 touched bytes read as at least 300 MB: in MiB (the kernel's KiB / 1024) they would
    be 286, and the RSS target (peak RSS / largest file, in MB) would be understated by 5%."""
    child = "b = bytearray(300_000_000); b[::4096] = b'x' * len(b[::4096])"
    m = measure([sys.executable, "-c", child], tmp_path / "child.log")
    assert m.exit_code == 0
    assert 300 <= m.peak_rss_mb < 300 + 60


def _row(tool: str, wall_s: float) -> Row:
    return Row("torch_npu 1x", "torch_npu", "1x", 105000, 127.3, 161.2, tool, wall_s, 240.0, 0, [wall_s])


def test_times_faster_comes_from_the_times_not_the_rounded_ratio() -> None:
    """92.481 s against 3.093 s is 29.9x; 1 / the 3-decimal ratio (0.033) would say 30.3x, a
    pass."""
    rows = [_row(MSPROF, 92.481), _row(DIAGNOSE, 3.093), _row(FLOOR, 1.5)]
    row = next(r for r in with_ratios(rows) if r["tool"] == DIAGNOSE)
    assert row["ratio_to_msprof_analyze"] == 0.033
    assert row["times_faster_than_msprof_analyze"] == 29.9
    check = next(t for t in targets(rows, scaling(rows)) if "30x faster" in t["target"])
    assert check["value"] == 29.9 and not check["met"]


def test_a_results_document_is_derived_again_from_its_measured_rows() -> None:
    """--from-json recomputes ratios and checks: an older results.json renders as a new one."""
    rows = [_row(MSPROF, 92.481), _row(DIAGNOSE, 2.847), _row(FLOOR, 1.823)]
    new = results_document(rows, tiny=False, total_s=60.0)
    old = json.loads(json.dumps(new))
    for row in old["rows"]:
        del row["times_faster_than_msprof_analyze"]
    old["targets"] = []
    again = recomputed_document(old)
    assert again["rows"] == new["rows"] and again["targets"] == new["targets"]
    assert again["machine"] == new["machine"] and again["total_run_s"] == 60.0


def test_docs_keep_every_run_once_and_the_readme_no_measurement(tmp_path: Path) -> None:
    """docs/benchmark.md gets each run's section on top (a regenerated one replaces its own), a run without the
    parse floor (databases) included; the README holds no table of measurements for a run to rewrite."""
    from bench.render import update_docs

    rows = [_row(DIAGNOSE, 2.0), _row(FLOOR, 1.0)]
    first = {**results_document(rows, tiny=False, total_s=60.0), "commit": "aaaaaaa", "sizes": ["1x"]}
    second = {**first, "commit": "bbbbbbb"}
    no_floor = {**results_document([_row(DIAGNOSE, 7.0)], tiny=False, total_s=60.0), "commit": "ccccccc", "sizes": []}
    docs = tmp_path / "benchmark.md"
    for doc in (first, second, second, no_floor):
        update_docs(docs, doc)
    text = docs.read_text(encoding="utf-8")
    assert text.count("commit bbbbbbb") == 2 and text.count("commit aaaaaaa") == 2  # heading + machine line
    assert text.index("commit ccccccc") < text.index("commit bbbbbbb") < text.index("commit aaaaaaa")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/benchmark.md" in readme and "bench:start" not in readme and "parse floor |" not in readme


def test_an_export_of_the_users_own_is_named_by_its_layout(tmp_path: Path) -> None:
    """A native msprof export holding only its database is msprof's, as one with its CSV slices is."""
    from bench.inputs import own_input

    for layout, name in [("msprof", "PROF_1/msprof_20250109074833.db"), ("torch_npu", "r_ascend_pt/x.db")]:
        folder = tmp_path / layout
        (folder / name).parent.mkdir(parents=True)
        (folder / name).write_bytes(b"")
        assert own_input(folder).layout == layout
