"""A batch's state does not depend on its history: identical copies are named, a rerun reports what earlier
batches lost and exits as the first did, `runs` marks partial runs, and a run is usable by one definition."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import duckdb
import pytest

from analyzer.cli import main
from analyzer.runs.catalog_schema import CATALOG_TABLES
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


@pytest.mark.slow
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


def _zip_folder(zip_path: Path, folder: Path) -> None:
    with zipfile.ZipFile(zip_path, "w") as zf:
        for p in sorted(folder.rglob("*")):
            zf.write(p, p.relative_to(folder.parent).as_posix())


def state_tree(root: Path) -> Path:
    """Four inputs: a run, its identical copy, a run that lost a file (a cut trace_view.json), and an export
    whose start times are unreadable (a failure)."""
    write_tiny_export(root / "good", seed=1, steps=2)
    shutil.copytree(root / "good", root / "mirror" / "good")
    partial = write_tiny_export(root / "partial", seed=2, steps=2)
    (partial / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text('{"traceEvents": [{"ph": "X", ')
    _unreadable_starts(root / "no_starts", seed=3)
    return root


def _batch(root: Path, catalog: Path, *more: str) -> int:
    return main(["batch", str(root), "--catalog", str(catalog), "--jobs", "1", "--no-diagnose", *more])


@pytest.mark.slow
def test_identical_copies_are_named_in_the_output_and_the_catalog_whichever_batch_finds_them(tmp_path, capsys):
    root, catalog = tmp_path / "tree", tmp_path / "c.duckdb"
    write_tiny_export(root / "good", seed=1, steps=2)
    shutil.copytree(root / "good", root / "mirror" / "good")
    _zip_folder(root / "zipped.zip", root / "good")
    assert _batch(root, catalog) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        f"1 run(s) catalogued, 0 already in the catalog (skipped), 0 failure(s) recorded in {catalog}; "
        "2 identical copies of another input"
    )
    assert lines[1:] == [
        "copy: mirror/good is identical to good, analysed once (the catalog's copies)",
        "copy: zipped.zip!/good is identical to good, analysed once (the catalog's copies)",
    ]
    # A copy found later, sorting before the catalogued run: the catalogued one stays the original.
    shutil.copytree(root / "good", root / "a_first" / "good")
    assert _batch(root, catalog) == 0
    out = capsys.readouterr().out
    assert "0 run(s) catalogued, 1 already in the catalog (skipped)" in out and "3 identical copies" in out
    assert "copy: a_first/good is identical to good," in out
    # An input identical to a run of the catalog, in a tree of its own that lacks the original.
    shutil.copytree(root / "good", tmp_path / "elsewhere" / "renamed")
    assert _batch(tmp_path / "elsewhere", catalog) == 0
    assert "copy: renamed is identical to good," in capsys.readouterr().out
    copies = "SELECT c.path, r.path FROM copies c JOIN catalog_runs r USING (fingerprint) ORDER BY c.path"
    assert _rows(catalog, copies) == [
        ("a_first/good", "good"),
        ("mirror/good", "good"),
        ("renamed", "good"),
        ("zipped.zip!/good", "good"),
    ]
    assert _rows(catalog, "SELECT path FROM catalog_runs") == [("good",)]


def _dump(catalog: Path) -> dict[str, list[tuple]]:
    return {t: _rows(catalog, f"SELECT * FROM {t} ORDER BY ALL") for t in CATALOG_TABLES}


@pytest.mark.slow
def test_a_rerun_reports_what_the_first_batch_lost_and_exits_as_it_did(tmp_path, capsys):
    root, catalog = state_tree(tmp_path / "tree"), tmp_path / "c.duckdb"
    assert _batch(root, catalog) == 3
    first, catalogued = capsys.readouterr(), _dump(catalog)
    assert _batch(root, catalog) == 3
    again = capsys.readouterr()
    assert again.err == first.err  # the failure, the run that lost a file, the exit's reason: the same lines
    assert "failed: no_starts: nothing usable: " in first.err
    assert "error: partial: catalogued with input lost: ASCEND_PROFILER_OUTPUT/trace_view.json: " in first.err
    assert first.out.splitlines()[0] == (
        f"2 run(s) catalogued, 0 already in the catalog (skipped), 1 failure(s) recorded in {catalog}; "
        "1 identical copy of another input"
    )
    assert again.out.splitlines()[0] == (
        f"0 run(s) catalogued, 2 already in the catalog (skipped), 1 failure(s) recorded (1 by an earlier batch) "
        f"in {catalog}; 1 identical copy of another input"
    )
    assert again.out.splitlines()[1:] == first.out.splitlines()[1:]
    assert _dump(catalog) == catalogued
    # Copies of those inputs in a tree of their own: what they lost is said under their own labels, as a batch
    # of that tree into a new catalog says it.
    shutil.copytree(root / "partial", tmp_path / "other" / "p2")
    shutil.copytree(root / "no_starts", tmp_path / "other" / "n2")
    assert _batch(tmp_path / "other", catalog) == 3
    known = capsys.readouterr()
    assert "0 run(s) catalogued, 0 already in the catalog (skipped), 1 failure(s) recorded (1 by" in known.out
    assert _batch(tmp_path / "other", tmp_path / "new.duckdb") == 3
    assert capsys.readouterr().err == known.err and "error: p2: catalogued with input lost: " in known.err


@pytest.mark.slow
def test_runs_marks_the_runs_that_lost_input(tmp_path, capsys):
    root, catalog = tmp_path / "tree", tmp_path / "c.duckdb"
    write_tiny_export(root / "good", seed=1, steps=2)
    partial = write_tiny_export(root / "partial", seed=2, steps=2)
    (partial / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text("[")
    assert _batch(root, catalog) == 3
    capsys.readouterr()
    assert main(["runs", str(catalog), "--format", "json"]) == 0
    listed = capsys.readouterr()
    assert [(r["path"], r["partial"]) for r in json.loads(listed.out)] == [("good", False), ("partial", True)]
    lost = "SELECT * FROM run_problems WHERE severity = 'error'"
    assert listed.err == f'1 partial run(s), with input lost: npu-triage query {catalog} "{lost}"\n'
    assert main(["runs", str(catalog), "--format", "table"]) == 0
    rows = [line.split("│") for line in capsys.readouterr().out.splitlines() if line.startswith("│")]
    assert [r[3].strip() for r in rows] == ["", "lost"]  # good, then partial: under 'input'


@pytest.mark.slow
def test_a_rerun_reports_a_job_that_lost_input_and_exits_3_as_the_first_batch(tmp_path, capsys):
    from fixtures.generator.job_layout import write_job
    from fixtures.generator.job_scenarios import job_plan

    root = write_job(job_plan("job_slow_rank", 4, 23, 1), tmp_path / "in")
    cut = next(root.glob("rank1_*_ascend_pt")) / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    cut.write_text(cut.read_text()[:300])
    catalog = tmp_path / "c.duckdb"
    assert _batch(root.parent, catalog) == 3
    first = capsys.readouterr().err
    assert (
        f"error: {root.name}: catalogued with input lost: {cut}: " in first and "(the catalog's job_problems)" in first
    )
    assert _batch(root.parent, catalog) == 3
    assert capsys.readouterr().err == first


@pytest.mark.slow
def test_a_catalog_written_before_the_copies_table_is_listed_and_exported(tmp_path, capsys):
    catalog = tmp_path / "c.duckdb"
    write_tiny_export(tmp_path / "tree" / "good", seed=1, steps=2)
    assert _batch(tmp_path / "tree", catalog) == 0
    con = duckdb.connect(str(catalog))
    con.execute("DROP TABLE copies")  # as a batch before it wrote it
    con.close()
    before = catalog.read_bytes()
    assert main(["runs", str(catalog)]) == 0
    assert main(["export", str(catalog), "--parquet", str(tmp_path / "pq")]) == 0
    assert (tmp_path / "pq" / "copies.parquet").is_file() and catalog.read_bytes() == before
    assert "error" not in capsys.readouterr().err
