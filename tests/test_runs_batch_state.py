"""A batch's state does not depend on its history: identical copies are named, a rerun reports what earlier
batches lost and exits as the first did, `runs` marks partial runs, and a run is usable by one definition."""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.cli import main
from tests.tiny_exports import write_tiny_export


def _unreadable_starts(folder: Path, seed: int = 0) -> Path:
    """A tiny export whose every start time is unreadable ('n/a'): its tasks have durations but no start."""
    write_tiny_export(folder, seed=seed, steps=2)
    csv = folder / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    head, *rows = csv.read_text().splitlines(keepends=True)
    cells = [row.split(",") for row in rows]
    csv.write_text(head + "".join(",".join([*c[:4], "n/a", *c[5:]]) for c in cells))
    return folder


def _rows(catalog: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_an_export_without_a_readable_start_is_unusable_to_diagnose_and_a_failure_to_batch(tmp_path, capsys):
    bad = _unreadable_starts(tmp_path / "tree" / "no_starts")
    write_tiny_export(tmp_path / "tree" / "fine", seed=1, steps=2)
    assert main(["diagnose", str(bad), "--out", str(tmp_path / "d")]) == 2
    assert "nothing usable was found: no device task could be read" in capsys.readouterr().err
    catalog = tmp_path / "c.duckdb"
    assert main(["batch", str(tmp_path / "tree"), "--catalog", str(catalog), "--jobs", "1", "--no-diagnose"]) == 0
    assert [r[0] for r in _rows(catalog, "SELECT path FROM catalog_runs")] == ["fine"]
    ((path, message),) = _rows(catalog, "SELECT path, message FROM failures")
    assert path == "no_starts" and message.startswith("nothing usable: warning: ")
    assert "no usable start time or duration" in message
    captured = capsys.readouterr()
    assert "1 run(s) catalogued" in captured.out and "failed: no_starts: nothing usable" in captured.err
