"""Outputs that cannot be written: refused before any work when that can be known (a read-only folder),
else a message naming the file (a full disk), never an "internal error"; what was replaced stays whole."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.malformed import base_exports as base
from tests.tree_hash import tree_digest

TRACEBACK = "Traceback (most recent call last)"


@pytest.fixture
def read_only_folder(tmp_path):
    """An empty folder nobody may write into: a read-only mount as root (who ignores permissions), else 0555."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a read-only folder: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def _cli(argv: list[str], cwd: Path, file_size_limit: int | None = None) -> subprocess.CompletedProcess:
    def limit() -> None:  # a disk that fills up: every write beyond this size fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.run(
        [sys.executable, "-m", "analyzer", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        preexec_fn=limit if file_size_limit else None,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "option"),
    [("diagnose", "--out"), ("ingest", "--db"), ("ingest", "--parquet"), ("diff", "--html")],
)
def test_output_in_read_only_folder_is_refused_before_any_work(command, option, read_only_folder, tmp_path):
    export = base.write_torch_text(tmp_path / "in")
    target = read_only_folder / ("x.duckdb" if option == "--db" else "x.html" if option == "--html" else "o")
    argv = [command, str(export), str(export)] if command == "diff" else [command, str(export)]
    proc = _cli([*argv, option, str(target)], tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{option} {target}: cannot be written" in proc.stderr, proc.stderr
    assert "internal error" not in proc.stderr and TRACEBACK not in proc.stderr
    assert "tasks" not in proc.stdout, "the check comes before the analysis"


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_full_disk_while_writing_html_names_the_file_and_leaves_no_temporary_file(tmp_path):
    export = base.write_torch_text(tmp_path / "in")
    before = tree_digest(tmp_path / "in")
    proc = _cli(["diagnose", str(export), "--out", str(tmp_path / "out")], tmp_path, file_size_limit=1 << 20)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "internal error" not in proc.stderr and TRACEBACK not in proc.stderr
    named = re.search(rf"{tmp_path / 'out'}/\S+: could not be written: File too large", proc.stderr)
    assert named, proc.stderr
    assert not [p for p in (tmp_path / "out").rglob("*") if p.name.endswith(".tmp")], "no temporary file left"
    assert tree_digest(tmp_path / "in") == before


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_full_disk_during_ingest_db_names_the_file_and_leaves_no_half_file(tmp_path):
    export = base.write_torch_text(tmp_path / "in")
    db = tmp_path / "runs.duckdb"
    proc = _cli(["ingest", str(export), "--db", str(db)], tmp_path, file_size_limit=64 << 10)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{db}: could not be written" in proc.stderr, proc.stderr
    assert "rollback" not in proc.stderr and "internal error" not in proc.stderr and TRACEBACK not in proc.stderr
    assert not db.exists() and not Path(f"{db}.wal").exists()


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_full_disk_during_ingest_db_leaves_an_existing_db_as_it_was(tmp_path):
    export = base.write_torch_text(tmp_path / "in")
    db = tmp_path / "runs.duckdb"
    assert _cli(["ingest", str(export), "--db", str(db)], tmp_path).returncode == 0
    kept = db.read_bytes()
    size = db.stat().st_size
    proc = _cli(["ingest", str(export), "--db", str(db)], tmp_path, file_size_limit=size)
    if proc.returncode == 0:
        pytest.skip("the second ingest fitted in the file as it was")
    assert f"{db}: could not be written" in proc.stderr, proc.stderr
    assert "internal error" not in proc.stderr and TRACEBACK not in proc.stderr
    if db.read_bytes() != kept:  # the failed write may be committed in the WAL: the file must still be whole
        again = _cli(["diagnose", "--db", str(db), "--out", str(tmp_path / "o"), "--format", "json"], tmp_path)
        assert again.returncode == 0, again.stderr
