"""The growth benchmark's slope fit, defect flags, targets, floor files and docs section, on fixed numbers."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import duckdb
import pytest

from analyzer.runs.catalog import open_catalog
from bench.batch_archive import same_catalogs
from bench.growth import _limits, plan
from bench.growth_commands import BASE, FLOOR, MSPROF, NPU, Command, clean_up, fresh
from bench.growth_fit import fits, loglog_slope
from bench.growth_inputs import floor_arguments
from bench.growth_render import END, START, section, write_docs
from bench.growth_results import FLOOR_TARGET, slopes, targets, with_ratios
from bench.measure import measure
from bench.parse_floor import _by_header, read_floor
from bench.parse_floor import main as parse_floor_main


def _row(axis: str, size: int, tool: str, wall: float, rss: float = 100.0, cpu: float | None = None, **extra) -> dict:
    cpu_s = wall if cpu is None else cpu
    return {
        "axis": axis,
        "size": size,
        "input_mb": size / 1000,
        "tool": tool,
        "wall_s": wall,
        "peak_rss_mb": rss,
        "cpu_s": cpu_s,
        "cpu_pct": round(100 * cpu_s / wall, 1),
        "exit_code": 0,
        "wall_s_runs": [wall],
        **extra,
    }


def _doc(rows: list[dict]) -> dict:
    machine = {"date": "2026-12-05", "nproc": 2, "memory_gb": 23.5, "cpu": "Test CPU", "python": "3.11.7"}
    return {
        "machine": machine,
        "commit": "abc1234",
        "baseline": None,
        "load_average": [1.0, 2.0, 3.0],
        "repeats": 1,
        "quick": False,
        "note": "",
        "command": "python bench/growth.py --axes ranks",
        "total_run_s": 90.0,
        "rows": rows,
    }


def test_the_slope_is_the_exponent_of_a_power_law_and_least_squares_over_noise() -> None:
    assert loglog_slope([(x, 3.0 * x) for x in (10, 100, 1000)]) == pytest.approx(1.0)
    assert loglog_slope([(x, 0.5 * x**2) for x in (8, 64, 512, 4096)]) == pytest.approx(2.0)
    noisy = [(10, 1.1), (100, 9.0), (1000, 110.0)]
    logs = [(math.log(x), math.log(y)) for x, y in noisy]
    mx, my = (sum(v) / 3 for v in zip(*logs, strict=True))
    expected = sum((u - mx) * (v - my) for u, v in logs) / sum((u - mx) ** 2 for u, _ in logs)
    assert loglog_slope(noisy) == pytest.approx(expected)
    assert loglog_slope([(10, 1.0)]) is None
    assert loglog_slope([(10, 1.0), (10, 2.0)]) is None
    assert loglog_slope([(10, 0.0), (100, 2.0)]) is None


def test_the_tail_fit_keeps_the_largest_sizes_where_start_up_weighs_least() -> None:
    # a fixed 1 s start-up plus a quadratic cost: every size hides it, the largest show it
    points = [(n, 1.0 + (n / 1000) ** 2) for n in (10, 100, 1000, 10_000, 100_000)]
    every, tail = fits(points)
    assert every.sizes == (10, 100, 1000, 10_000, 100_000) and tail.sizes == (1000, 10_000, 100_000)
    assert every.slope < tail.slope and tail.slope == pytest.approx(1.9, abs=0.1)
    assert tail.defect
    assert fits(points[:3])[1].slope is None
    assert not fits([(1, 1.0), (10, 10**1.104)])[0].defect  # shown as 1.10: not above the limit


def test_only_the_engine_is_flagged_a_defect_and_unfinished_runs_are_left_out() -> None:
    rows = [_row("ranks", n, NPU, n / 10) for n in (8, 64, 512)]
    rows += [_row("ranks", n, BASE, (n / 10) ** 1.5) for n in (8, 64, 512)]
    rows += [_row("ranks", n, MSPROF, (n / 10) ** 1.5) for n in (8, 64, 512)]
    rows += [{**_row("ranks", 4096, NPU, 1e6), "exit_code": 2}]
    by_tool = {s["tool"]: s for s in slopes(rows)}
    assert by_tool[NPU]["slope"] == pytest.approx(1.0) and by_tool[NPU]["sizes"] == [8, 64, 512]
    assert by_tool[NPU]["defect"] == []
    assert by_tool[BASE]["defect"] == ["wall", "CPU"] and by_tool[BASE]["slope"] == pytest.approx(1.5)
    assert by_tool[MSPROF]["defect"] == []
    # CPU time linear, wall time not: the machine's load or lost parallelism, a defect of wall time only
    loaded = [_row("runs", n, NPU, (n / 10) ** 1.3, cpu=n / 10) for n in (10, 100, 1000)]
    assert slopes(loaded)[0]["defect"] == ["wall"] and slopes(loaded)[0]["cpu_slope"] == 1.0


def test_ratios_and_the_issues_targets_come_from_the_rows_of_the_same_input() -> None:
    rows = [
        _row("ranks", 1024, NPU, 3.0, rss=900.0, cpu=5.4),
        _row("ranks", 1024, MSPROF, 8.0),
        _row("ranks", 4096, NPU, 12.0, rss=2100.0),
        _row("runs", 200, NPU, 9.0, cpu=6.0, same_catalog=True),
        _row("runs", 200, FLOOR, 4.0),
        _row("gaps", 200_000, NPU, 1.5, rss=700.0, cpu=3.0),  # within 2x by wall time, not by CPU time
        _row("gaps", 200_000, FLOOR, 1.0, rss=500.0),
    ]
    ratios = {(r["axis"], r["size"], r["tool"]): r for r in with_ratios(rows)}
    assert ratios[("ranks", 1024, NPU)]["ratio_to_msprof"] == 0.375
    assert ratios[("ranks", 1024, NPU)]["cpu_ratio_to_floor"] is None
    assert ratios[("runs", 200, NPU)]["ratio_to_floor"] == 2.25
    assert ratios[("runs", 200, NPU)]["cpu_ratio_to_floor"] == 1.5
    assert ratios[("runs", 200, FLOOR)]["ratio_to_floor"] is None
    met = {(t["subject"], t["target"]): t["met"] for t in targets(rows)}
    assert met == {
        ("1,024 ranks", "diagnose within 0.5x msprof-analyze"): True,
        ("1,024 ranks", "peak RSS MB under 1,000"): True,
        ("1,024 ranks", "CPU % >= 150 (both cores)"): True,
        ("4,096 ranks", "peak RSS MB under 2,000"): False,
        ("200 runs", f"batch {FLOOR_TARGET}"): False,
        ("200 runs", "catalog identical to the baseline's"): True,
        ("200,000 gaps", f"diagnose {FLOOR_TARGET}"): False,
        ("200,000 gaps", "peak RSS within 1.5x the parse floor's"): True,
    }


def test_the_docs_section_shows_rows_slopes_and_defects_and_replaces_itself(tmp_path: Path) -> None:
    rows = [_row("runs", n, NPU, (n / 10) ** 1.3) for n in (10, 100, 1000, 2000)]
    rows += [_row("runs", n, FLOOR, n / 100) for n in (10, 100, 1000, 2000)]
    text = section(_doc(rows))
    assert text.startswith(START) and text.rstrip().endswith(END)
    tables = [line for line in text.splitlines() if line.startswith("|")]
    assert {line.count("|") for line in tables[: len(rows) + 2]} == {12}  # every row as wide as the header
    assert {line.count("|") for line in tables[len(rows) + 2 :]} == {10}
    assert "| runs | 2,000 | 2.0 | npu-triage | 980.25 | 980.25 | 100 | 100 | 49.01 | 49.01 | - |" in text
    assert (
        "| runs | npu-triage | 10 to 2,000 (4 sizes) | 1.30 | 1.30 | 1.30 | 1.30 | 0.00 | DEFECT (wall and CPU time) |"
        in text
    )
    assert "| runs | parse floor | 10 to 2,000 (4 sizes) | 1.00 | 1.00 | 1.00 | 1.00 | 0.00 | reference |" in text
    assert (
        "- defect: runs, npu-triage: slope 1.3 over every size, 1.3 over the largest 3 of wall time, "
        "slope 1.3 over every size, 1.3 over the largest 3 of CPU time (limit 1.1)"
    ) in text
    assert "at commit abc1234 on 2 cores" in text and "Regenerate: `python bench/growth.py --axes ranks`." in text
    page = tmp_path / "benchmark.md"
    page.write_text("# Benchmark\n\nother runs\n\n<!-- dask:start -->\n## Batch\n<!-- dask:end -->\n", encoding="utf-8")
    write_docs(page, _doc(rows))
    write_docs(page, _doc([_row("runs", n, NPU, n / 10) for n in (10, 100)]))
    written = page.read_text(encoding="utf-8")
    assert written.count(START) == 1 and "DEFECT" not in written and "- no slope of npu-triage above 1.1" in written
    assert written.startswith("# Benchmark\n\nother runs\n\n<!-- dask:start -->\n## Batch\n<!-- dask:end -->\n\n")


def test_the_floor_reads_every_file_one_table_per_kind_through_an_argument_file(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run" / "mindstudio_profiler_output"
    out.mkdir(parents=True)
    for n in (0, 1):
        (out / f"op_summary_slice_{n}_20250101.csv").write_text(f"Op Name,Task Duration(us)\nop{n},1.5\n")
    (out / "task_time_20250101.csv").write_text("kernel_name,task_time(us)\nk,2\n")
    (out / "msprof_20250101.json").write_text('[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": "1.5", "dur": 1}]')
    (tmp_path / "run" / "info.json.0").write_text('{"devices": "0"}')
    (tmp_path / "run" / "profiler_info_0.json").write_text('{"config": {}}')
    args = floor_arguments(tmp_path / "run")
    assert [a for a in args if a.startswith("--")] == ["--csv", "--csv", "--json", "--json-objects"]
    assert args[1].endswith("op_summary_slice_0_20250101.csv") and args[2].endswith("op_summary_slice_1_20250101.csv")
    assert args[-2].endswith("info.json.0") and args[-1].endswith("profiler_info_0.json")
    listed = tmp_path / "floor.args"
    listed.write_text("\n".join(args) + "\n")
    assert parse_floor_main([f"@{listed}"]) == 0
    assert capsys.readouterr().out.strip() == "3 csv rows, 1 events"


def test_sizes_are_capped_per_axis_and_bad_limits_are_refused() -> None:
    assert _limits("ranks=256, kernels=200k,gaps=1M") == {"ranks": 256, "kernels": 200_000, "gaps": 1_000_000}
    with pytest.raises(SystemExit, match="AXIS=SIZE"):
        _limits("nodes=4")

    class Args:
        quick, axes, max = False, ["ranks", "runs"], {"ranks": 256, "runs": 200}

    assert plan(Args()) == {"ranks": [8, 16, 32, 64, 128, 256], "runs": [10, 20, 50, 100, 200]}


def test_a_measurement_counts_the_cpu_time_of_the_command_and_its_children(tmp_path: Path) -> None:
    spin = "import time\nend = time.process_time() + 0.2\nwhile time.process_time() < end: pass"
    child = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {spin!r}])"
    m = measure([sys.executable, "-c", child], tmp_path / "spin.log")
    assert m.exit_code == 0 and 0.2 <= m.cpu_s <= m.wall_s * 2 + 0.1


@pytest.mark.slow
def test_a_newer_catalog_format_is_the_same_catalog_while_its_own_columns_are_null(tmp_path: Path) -> None:
    old, new = tmp_path / "old.duckdb", tmp_path / "new.duckdb"
    for path in (old, new):
        con = open_catalog(path)
        con.execute("INSERT INTO findings (run_id, rank, code, impact_us) VALUES ('r', 1, 'COM001', 5.0)")
        con.close()
    con = duckdb.connect(str(old))
    con.execute("ALTER TABLE findings DROP COLUMN explained_by")  # as an older format wrote it
    con.close()
    assert all(same_catalogs(old, new).values())
    con = duckdb.connect(str(new))
    con.execute("UPDATE findings SET explained_by = 'partly explained by JOB001'")
    con.close()
    assert [t for t, same in same_catalogs(old, new).items() if not same] == ["findings"]
    assert [t for t, same in same_catalogs(new, old).items() if not same] == ["findings"]  # a column lost


def test_each_round_writes_a_new_folder_and_earlier_ones_go_only_at_the_end(tmp_path):
    cmd = Command(lambda out: ["tool", "-o", str(out)], tmp_path, {}, tmp_path / "work" / "npu-triage")
    trash = tmp_path / "trash"
    left = cmd.round_output(1)
    (left / "old").mkdir(parents=True)  # what an earlier benchmark into the same --out left
    first = fresh(cmd, 1, trash)
    (first / "report.html").write_text("1")
    second = fresh(cmd, 2, trash)
    assert first != second and list(first.iterdir()) == [first / "report.html"]
    assert list(second.iterdir()) == [] and cmd.argv_for(second) == ["tool", "-o", str(second)]
    assert [p.name for p in trash.iterdir()] == ["0-npu-triage.1"]  # moved aside, not deleted between runs
    clean_up({NPU: cmd}, 2, trash)
    assert not first.exists() and second.is_dir() and not trash.exists()


def test_the_floor_reads_a_kind_in_one_scan_per_header(tmp_path: Path) -> None:
    files = {
        "a.csv": "Name,Duration(us)\nx,1.5\ny,2\n",
        "b.csv": "Name,Duration(us)\nz,3\n",  # the same header as a.csv: one scan
        "c.csv": "Name,Duration(us),Block Dim\nw,4,8\n",  # a header of its own (a newer CANN's column)
        "d.csv": "Name,Duration(us),Block Dim\nv,5,NO\n",  # c's header, text where c has an integer
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    paths = [str(tmp_path / n) for n in files]
    assert _by_header(paths) == [paths[:2], paths[2:]]
    assert read_floor([paths], []) == (5, 0)


def test_the_docs_section_rewritten_from_a_runs_results_takes_a_new_note_into_both(tmp_path: Path) -> None:
    import json

    from bench.growth import rewrite_from_json

    results, page = tmp_path / "growth_results.json", tmp_path / "benchmark.md"
    results.write_text(json.dumps({**_doc([_row("runs", n, NPU, n / 10) for n in (10, 100)]), "note": "as run"}))
    page.write_text("# Benchmark\n", encoding="utf-8")
    rewrite_from_json(results, page, "")
    assert "\nas run\n" in page.read_text(encoding="utf-8")
    rewrite_from_json(results, page, "said afterwards")
    written = page.read_text(encoding="utf-8")
    assert "\nsaid afterwards\n" in written and "as run" not in written and written.count(START) == 1
    assert json.loads(results.read_text(encoding="utf-8"))["note"] == "said afterwards"
