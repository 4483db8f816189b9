"""The program ends its process at once after a command (cli/process_end.py) and loses nothing:
exit codes, everything printed, complete reports, and no spill folder left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.malformed.base_exports import write_torch_text

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    return write_torch_text(tmp_path_factory.mktemp("export"))


def _program(argv: list[str], tmp: Path, **kwargs) -> subprocess.CompletedProcess:
    """`python -m analyzer ARGV` with its temporary files (DuckDB's spill folders) under ``tmp``."""
    env = {**os.environ, "TMPDIR": str(tmp), "NPU_TRIAGE_MEMORY_LIMIT": "lean"}
    return subprocess.run(
        [sys.executable, "-m", "analyzer", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        **kwargs,
    )


def test_process_end_keeps_output_reports_and_removes_spill_folders(export, tmp_path):
    temp = tmp_path / "temp"
    temp.mkdir()
    out = tmp_path / "out"
    done = _program(["diagnose", str(export), "--out", str(out), "--format", "json,md"], temp)
    assert done.returncode in (0, 1), done.stderr
    written = [line.removeprefix("wrote ") for line in done.stdout.splitlines() if line.startswith("wrote ")]
    assert [Path(p).name for p in written] == ["diagnosis.json", "diagnosis.md"]  # the last lines printed
    assert json.loads(Path(written[0]).read_text(encoding="utf-8"))["findings"] is not None
    assert Path(written[1]).read_text(encoding="utf-8").strip()
    assert not list(temp.glob("npu-triage-spill-*")), "a spill folder was left behind"
    assert "Traceback" not in done.stderr


def test_process_end_keeps_exit_code_and_message_of_a_failed_command(tmp_path):
    done = _program(["diagnose", str(tmp_path / "no-such-export"), "--out", str(tmp_path / "out")], tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip(), "the reason is printed before the process ends"


def _end_process_child(code: str, stdout: int) -> subprocess.CompletedProcess:
    """Run ``code`` (which ends with ``end_process``) in a child with stdout block-buffered, as in a pipe."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60
    )


def test_process_end_flushes_buffered_output_and_runs_exit_callbacks(tmp_path):
    marker = tmp_path / "callback-ran"
    code = (
        "import atexit, sys; from analyzer.cli.process_end import end_process; "
        f"atexit.register(lambda: open({str(marker)!r}, 'w').close()); "
        "sys.stdout.write('kept' * 1000); end_process(3)"
    )
    done = _end_process_child(code, subprocess.PIPE)
    assert done.returncode == 3
    assert done.stdout == "kept" * 1000  # still in the buffer when the process ended
    assert marker.exists()


def test_process_end_after_the_reader_closed_the_pipe():
    """`npu-triage ... | head -1`: output left in the buffer cannot be delivered; the process still
    ends with its code, quietly (no traceback, no 'Exception ignored')."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = _end_process_child(
            "import sys; from analyzer.cli.process_end import end_process; sys.stdout.write('lost'); end_process(3)",
            write_end,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 3
    assert done.stderr == ""


def test_process_end_is_what_the_installed_program_runs():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'npu-triage = "analyzer.cli:run"' in text
    assert "run()" in (ROOT / "analyzer" / "__main__.py").read_text(encoding="utf-8")


def test_process_end_keeps_objects_only_for_a_program_that_ends_at_once(monkeypatch):
    import gc
    import weakref

    from analyzer.cli import process_end

    class Held:
        pass

    held = Held()
    ref = weakref.ref(held)
    process_end.keep_until_exit(held)  # a caller in the same process (a test): nothing is held
    del held
    gc.collect()
    assert ref() is None

    monkeypatch.setattr(process_end, "_kept", [])  # as run_then_end sets it
    held = Held()
    ref = weakref.ref(held)
    process_end.keep_until_exit(held)
    del held
    gc.collect()
    assert ref() is not None  # held for the program's end
    process_end.release_kept()  # as before a second attempt with more memory
    gc.collect()
    assert ref() is None
