"""DuckDB's memory limit: one fixed value, set by option or environment, spilling to a private folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import analyzer
from analyzer.cli import main
from analyzer.execution.memory import ENV, MemoryLimitError, default_bytes, memory_limit_bytes
from analyzer.ingest.database import connect
from fixtures.generator import write_export

ROOT = Path(__file__).resolve().parents[1]


def _limit_bytes(con) -> int:
    """DuckDB's limit as it shows it ('3.9 GiB': one decimal of a binary unit)."""
    number, unit = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0].split()
    return int(float(number) * {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit])


def test_default_limit_is_a_capped_share_of_the_machine_and_does_not_depend_on_input(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert 64 << 20 <= default_bytes() <= 4 << 30
    assert memory_limit_bytes() == default_bytes()
    assert abs(_limit_bytes(connect()) - default_bytes()) <= default_bytes() // 30


def test_option_wins_over_environment(monkeypatch):
    monkeypatch.setenv(ENV, "2GB")
    assert memory_limit_bytes() == 2 * 10**9
    assert memory_limit_bytes("512MB") == 512 * 10**6
    assert abs(_limit_bytes(connect(memory_limit_bytes("300MiB"))) - (300 << 20)) < 1 << 20


@pytest.mark.parametrize("text", ["lots", "12XB", "-1GB", "10MB"])
def test_a_bad_limit_names_where_it_came_from(monkeypatch, text):
    monkeypatch.setenv(ENV, text)
    with pytest.raises(MemoryLimitError, match=ENV):
        memory_limit_bytes()
    with pytest.raises(MemoryLimitError, match="--memory-limit"):
        memory_limit_bytes(text)


def test_cli_rejects_a_bad_limit_with_exit_2_and_no_traceback(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert main(["diagnose", str(tmp_path), "--memory-limit", "lots"]) == 2
    err = capsys.readouterr().err
    assert "--memory-limit: 'lots' is not a size" in err and "Traceback" not in err
    monkeypatch.setenv(ENV, "lots")
    assert main(["rules", "list"]) == 2
    assert f"{ENV}: 'lots' is not a size" in capsys.readouterr().err


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_spill_folder_is_private_and_removed_at_exit(tmp_path):
    """DuckDB writes past its limit into a folder of its own under TMPDIR, gone once the process ends."""
    code = (
        "from analyzer.ingest.database import connect\n"
        "con = connect(64 << 20)\n"
        "print(con.execute(\"SELECT current_setting('temp_directory')\").fetchall()[0][0])\n"
        "con.execute('CREATE TABLE t AS SELECT range AS i, md5(range::VARCHAR) AS h FROM range(3000000)')\n"
        "print(con.execute('SELECT coalesce(sum(temporary_storage_bytes), 0) FROM duckdb_memory()').fetchall()[0][0])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env={"TMPDIR": str(tmp_path)}
    )
    assert done.returncode == 0, done.stderr
    folder, spilled = done.stdout.split()
    assert Path(folder).parent == tmp_path and Path(folder).name.startswith("npu-triage-spill-")
    assert int(spilled) > 0  # the table did not fit: DuckDB spilled it
    assert not Path(folder).exists()


@pytest.mark.slow
def test_a_small_limit_spills_and_gives_the_same_diagnosis(tmp_path, capsys, monkeypatch):
    """Under a limit below the export's size DuckDB spills to disk; the diagnosis is the same."""
    monkeypatch.delenv(ENV, raising=False)
    (root,) = write_export("large", tmp_path / "in", layout="msprof", seed=5, tasks=30_000)
    assert main(["diagnose", str(root), "--out", str(tmp_path / "roomy"), "--format", "json,md"]) == 0
    with analyzer.load(root, memory_limit="64MiB") as trace:
        written = analyzer.report(analyzer.diagnose(trace), tmp_path / "tight")
        spilled = trace.query("SELECT sum(temporary_storage_bytes) AS b FROM duckdb_memory()").to_pylist()[0]["b"]
    assert spilled > 0  # the tables did not fit: DuckDB holds part of them on disk
    for path in written:
        assert path.read_bytes() == (tmp_path / "roomy" / path.relative_to(tmp_path / "tight")).read_bytes()
    assert json.loads((written[0]).read_text())["findings"]
