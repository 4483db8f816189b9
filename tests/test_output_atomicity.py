"""Outputs are written atomically: killing `diagnose` or `ingest` never leaves a half-written file."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.malformed.base_exports import write_torch_text
from tests.tree_hash import tree_digest

pytestmark = pytest.mark.slow

KILL_DELAYS_S = sorted(random.Random(7).uniform(1.5, 6.0) for _ in range(4))


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


@pytest.mark.parametrize("delay_s", KILL_DELAYS_S, ids=[f"{d:.1f}s" for d in KILL_DELAYS_S])
def test_output_diagnose_killed_leaves_only_complete_reports(export, tmp_path, delay_s):
    before = tree_digest(export)
    out = tmp_path / "out"
    code = _kill_after(["diagnose", str(export), "--out", str(out), "--format", "json,md,html"], delay_s, tmp_path)
    _assert_reports_complete(out)
    assert code in (None, 0, 1)
    assert tree_digest(export) == before


def test_output_diagnose_rerun_over_killed_one_replaces_reports(export, tmp_path):
    out = tmp_path / "out"
    _kill_after(["diagnose", str(export), "--out", str(out), "--format", "json,md,html"], 3.0, tmp_path)
    code = _kill_after(["diagnose", str(export), "--out", str(out), "--format", "json,md,html"], 120, tmp_path)
    assert code in (0, 1)
    assert {p.name for p in out.rglob("*.*")} >= {"diagnosis.json", "diagnosis.md", "report.html"}
    _assert_reports_complete(out)


@pytest.mark.parametrize("delay_s", KILL_DELAYS_S[:2], ids=[f"{d:.1f}s" for d in KILL_DELAYS_S[:2]])
def test_output_ingest_killed_leaves_readable_parquet_and_db(export, tmp_path, delay_s):
    pq, db = tmp_path / "pq", tmp_path / "runs.duckdb"
    _kill_after(["ingest", str(export), "--db", str(db), "--parquet", str(pq)], delay_s, tmp_path)
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


def test_output_save_parquet_is_atomic_per_file(export, tmp_path):
    from analyzer.ingest import load_export
    from analyzer.ingest.database import save_parquet

    started = time.monotonic()
    written = save_parquet(load_export(export).con, tmp_path / "pq")
    assert written and all(p.exists() for p in written)
    assert not [p for p in (tmp_path / "pq").iterdir() if p.name.startswith(".")]
    assert time.monotonic() - started < 60
