"""Outputs are written atomically: killing `diagnose` or `ingest` never leaves a half-written file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.malformed.base_exports import write_torch_text
from tests.tree_hash import tree_digest

pytestmark = pytest.mark.slow

# When to kill a command, as a share of its uninterrupted run time on this machine: from start-up to the
# last report written, so that the kills land in every stage whatever the machine's speed.
KILL_AT = (0.2, 0.45, 0.7, 0.9)


def _kill_after(argv: list[str], delay_s: float, cwd: Path) -> int | None:
    """Run `python -m analyzer argv`, SIGKILL it after delay_s; its exit code, None if killed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "analyzer", *argv],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        return proc.wait(timeout=delay_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None


def _run_time(argv: list[str], cwd: Path) -> float:
    """Seconds `python -m analyzer argv` takes to the end, uninterrupted."""
    started = time.monotonic()
    assert _kill_after(argv, 120, cwd) in (0, 1)
    return time.monotonic() - started


def _killed_mid_run(argv: list[str], delay_s: float, cwd: Path, outputs: list[Path]) -> None:
    """Run the command and kill it after ``delay_s``; when it ended first (a faster run than the measured
    one), remove its ``outputs`` and try again sooner, so that the test always sees a killed command."""
    for _ in range(4):
        if _kill_after(argv, delay_s, cwd) is None:
            return
        for path in outputs:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        delay_s /= 2
    pytest.fail(f"the command always ended before it could be killed: {argv}")


def _assert_reports_complete(out: Path) -> None:
    for path in [*out.rglob("diagnosis.*"), *out.rglob("report.html")]:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            assert json.loads(text)["completeness"] is not None
        elif path.suffix == ".html":
            assert text.rstrip().endswith("</html>"), f"{path} is cut short"
        elif path.suffix == ".md":
            assert text.strip(), f"{path} is empty"


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    return write_torch_text(tmp_path_factory.mktemp("export"))


def _diagnose(export: Path, out: Path) -> list[str]:
    return ["diagnose", str(export), "--out", str(out), "--format", "json,md,html"]


def _ingest(export: Path, db: Path, pq: Path) -> list[str]:
    return ["ingest", str(export), "--db", str(db), "--parquet", str(pq)]


@pytest.fixture(scope="module")
def run_times(export, tmp_path_factory) -> dict[str, float]:
    """The uninterrupted run time of each command killed below, on this machine."""
    tmp = tmp_path_factory.mktemp("timed")
    return {
        "diagnose": _run_time(_diagnose(export, tmp / "out"), tmp),
        "ingest": _run_time(_ingest(export, tmp / "runs.duckdb", tmp / "pq"), tmp),
    }


@pytest.mark.parametrize("share", KILL_AT, ids=[f"at{s:.0%}" for s in KILL_AT])
def test_output_diagnose_killed_leaves_only_complete_reports(export, run_times, tmp_path, share):
    before = tree_digest(export)
    out = tmp_path / "out"
    _killed_mid_run(_diagnose(export, out), share * run_times["diagnose"], tmp_path, [out])
    _assert_reports_complete(out)
    assert tree_digest(export) == before


def test_output_diagnose_rerun_over_killed_one_replaces_reports(export, run_times, tmp_path):
    out = tmp_path / "out"
    _killed_mid_run(_diagnose(export, out), 0.8 * run_times["diagnose"], tmp_path, [out])
    code = _kill_after(_diagnose(export, out), 120, tmp_path)
    assert code in (0, 1)
    assert {p.name for p in out.rglob("*.*")} >= {"diagnosis.json", "diagnosis.md", "report.html"}
    _assert_reports_complete(out)


@pytest.mark.parametrize("share", KILL_AT[1::2], ids=[f"at{s:.0%}" for s in KILL_AT[1::2]])
def test_output_ingest_killed_leaves_readable_parquet_and_db(export, run_times, tmp_path, share):
    pq, db = tmp_path / "pq", tmp_path / "runs.duckdb"
    _killed_mid_run(
        _ingest(export, db, pq), share * run_times["ingest"], tmp_path, [pq, db, db.with_name("runs.duckdb.wal")]
    )
    for path in pq.glob("*.parquet"):  # a named Parquet file is always whole; temporaries start with '.'
        duckdb.execute("SELECT count(*) FROM read_parquet(?)", [str(path)]).fetchone()
    if db.exists():
        with duckdb.connect(str(db)) as con:  # a transaction: either no rows of the run, or all of them
            tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
            if "ops" in tables:
                assert con.execute("SELECT count(*) FROM ops").fetchone()[0] in (0, 8)


def test_output_write_atomically_leaves_no_temporary_on_success(tmp_path):
    from analyzer.atomic_files import write_text_atomically as write_atomically

    target = write_atomically(tmp_path / "diagnosis.json", json.dumps({"completeness": []}))
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_output_files_of_one_folder_made_once_keep_mode_and_name_what_fails(tmp_path):
    import os

    from analyzer.atomic_files import OutputError, write_text_atomically

    folder = tmp_path / "out" / "run"
    old = write_text_atomically(folder / "a.md", "old\n")  # its folder made for it, then found by the others
    (folder / "b.md").mkdir()  # a folder where a file goes: its rename fails, the other file is written
    with pytest.raises(OutputError, match="b.md: could not be written"):
        write_text_atomically(folder / "b.md", "text")
    write_text_atomically(folder / "a.md", "new \u00e9\n")
    assert old.read_bytes() == "new \u00e9\n".encode() and sorted(p.name for p in folder.iterdir()) == ["a.md", "b.md"]
    assert old.stat().st_mode & 0o777 == 0o666 & ~_umask()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(OutputError, match="file/sub/c.md: could not be written"):  # its folder cannot be made
        write_text_atomically(tmp_path / "file" / "sub" / "c.md", "text")
    assert os.listdir(tmp_path / "out") == ["run"]


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_output_save_parquet_is_atomic_per_file(export, tmp_path):
    from analyzer.ingest import load_export
    from analyzer.ingest.database import save_parquet

    started = time.monotonic()
    written = save_parquet(load_export(export).con, tmp_path / "pq")
    assert written and all(p.exists() for p in written)
    assert not [p for p in (tmp_path / "pq").iterdir() if p.name.startswith(".")]
    assert time.monotonic() - started < 60
