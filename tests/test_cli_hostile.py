"""The hostile command lines of ``tests/malformed/cli_cases.py`` through the whole CLI.

Each case: the exit code it states, a message matching its pattern, never a traceback or an
"internal error", the input folder byte-identical, nothing new inside an export.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import pytest

from analyzer.cli import main
from analyzer.execution import threads
from tests.malformed.cli_cases import CLI_CASES, SECRET, CliCase
from tests.tree_hash import tree_digest

TRACEBACK = "Traceback (most recent call last)"


def _run_case(case: CliCase, tmp_path: Path, monkeypatch, capsys) -> tuple[int, str, str]:
    run = case.setup(tmp_path)
    # as a user's command runs: without the thread count the suite's workers share the cores by (conftest.py),
    # an input is sized before it is read (execution/threads.small_input_threads), and that walk meets it first
    monkeypatch.delenv(threads.ENV, raising=False)
    for key, value in run.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(run.cwd or tmp_path)
    before = tree_digest(tmp_path / "in")
    code = main(run.argv)
    captured = capsys.readouterr()
    assert tree_digest(tmp_path / "in") == before, f"{run.argv[0]} changed or wrote inside the input folder"
    return code, captured.out, captured.err


def _fast_loop_first_of_each_class() -> list:
    """Every case; the first of each class in the fast loop, the others marked slow."""
    seen: set[str] = set()
    params = []
    for case in CLI_CASES:
        params.append(pytest.param(case, id=case.name, marks=() if case.cls not in seen else pytest.mark.slow))
        seen.add(case.cls)
    return params


@pytest.mark.slow
@pytest.mark.parametrize("case", _fast_loop_first_of_each_class())
def test_cli_hostile_case_exits_as_stated_with_a_named_message(case: CliCase, tmp_path, monkeypatch, capsys):
    code, out, err = _run_case(case, tmp_path, monkeypatch, capsys)
    text = out + err
    assert TRACEBACK not in text and "internal error" not in text, text
    assert code == case.code, f"exit {code}, expected {case.code}:\n{text}"
    if case.message:
        assert re.search(case.message, err if case.code else text), f"no message like {case.message!r}:\n{text}"
    if case.cls == "archive":
        assert "npu-triage-batch-" not in text, "a message shows a temporary path"
    if case.cls == "rule_sql":  # the rule read nothing and wrote nothing, and its failure is recorded
        reports = " ".join(p.read_text() for p in (tmp_path / "out").rglob("diagnosis.*"))
        assert SECRET not in text + reports and not (tmp_path / "pwned.csv").exists()
        assert re.search(r"query failed: Permission Error: Cannot access", reports), "the rule's outcome says why"


def _first_of_each_class() -> list[CliCase]:
    seen: dict[str, CliCase] = {}
    for case in CLI_CASES:
        seen.setdefault(case.cls, case)
    return list(seen.values())


@pytest.mark.slow
@pytest.mark.parametrize("case", _first_of_each_class(), ids=lambda c: c.cls)
def test_cli_hostile_class_through_the_program(case: CliCase, tmp_path):
    """One case per class through ``python -m analyzer``, as a user runs it."""
    run = case.setup(tmp_path)
    before = tree_digest(tmp_path / "in")
    proc = subprocess.run(
        [sys.executable, "-m", "analyzer", *run.argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=run.cwd or tmp_path,
        env={**os.environ, **run.env},
    )
    assert TRACEBACK not in proc.stdout + proc.stderr, proc.stderr
    assert proc.returncode == case.code, proc.stdout + proc.stderr
    assert tree_digest(tmp_path / "in") == before


def test_cli_hostile_corpus_size():
    assert len(CLI_CASES) >= 50


@pytest.mark.slow
@pytest.mark.parametrize("command", ["diagnose", "ingest", "batch"])
def test_tree_with_a_folder_that_cannot_be_listed_reads_the_rest_and_exits_3(command):
    """A sub-folder without read permission: named, exit 3, the other export read."""
    from tests.malformed import base_exports as base

    top = Path(tempfile.mkdtemp(prefix="npu-triage-unlistable-", dir="/tmp"))
    try:
        top.chmod(0o777)
        for name in ("good", "locked"):
            (top / "in" / name).mkdir(parents=True)
            base.write_torch_text(top / "in" / name)
        for p in [top / "in", *(top / "in").rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        (top / "in" / "locked").chmod(0o000)
        argv = {
            "diagnose": ["diagnose", str(top / "in"), "--out", str(top / "out"), "--format", "json"],
            "ingest": ["ingest", str(top / "in")],
            "batch": ["batch", str(top / "in"), "--catalog", str(top / "c.duckdb"), "--jobs", "1", "--no-diagnose"],
        }[command]
        proc = subprocess.run(
            [*_without_root_privilege(), sys.executable, "-m", "analyzer", *argv],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=top,
        )
        assert TRACEBACK not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert re.search(r"locked: cannot be listed: Permission denied", proc.stderr), proc.stderr
    finally:
        (top / "in" / "locked").chmod(0o755)
        shutil.rmtree(top)


@pytest.mark.slow
def test_an_export_whose_ascend_profiler_output_cannot_be_listed_is_named_as_that_folder():
    """Not its parent: the export folder itself can be listed (issue 45)."""
    from tests.malformed import base_exports as base

    top = Path(tempfile.mkdtemp(prefix="npu-triage-unlistable-", dir="/tmp"))
    try:
        top.chmod(0o777)
        for name in ("good", "locked"):
            (top / "in" / name).mkdir(parents=True)
            base.write_torch_text(top / "in" / name)
        for p in [top / "in", *(top / "in").rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        locked = next((top / "in" / "locked").glob("*_ascend_pt")) / "ASCEND_PROFILER_OUTPUT"
        locked.chmod(0o000)
        argv = ["ingest", str(top / "in")]
        proc = subprocess.run(
            [*_without_root_privilege(), sys.executable, "-m", "analyzer", *argv],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=top,
        )
        assert TRACEBACK not in proc.stderr and proc.returncode == 3, proc.stderr
        assert re.search(r"_ascend_pt/ASCEND_PROFILER_OUTPUT: cannot be listed: Permission denied", proc.stderr)
    finally:
        for p in (top / "in").rglob("ASCEND_PROFILER_OUTPUT"):
            p.chmod(0o755)
        shutil.rmtree(top)


def _without_root_privilege() -> list[str]:
    """A command prefix under which root obeys file permissions as other users do (it drops the
    capabilities that let root read any folder); nothing for an ordinary user."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        pytest.skip("run as root without setpriv: permissions do not stop root")
    caps = "-dac_override,-dac_read_search"
    return ["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}", "--"]


def test_unpack_writes_only_the_files_readers_use(tmp_path):
    from analyzer.runs.archives import unpack
    from tests.malformed.cli_cases import BOMB, export_entries, zip_bytes

    entries = export_entries(tmp_path)
    archive = tmp_path / "runs.zip"
    archive.write_bytes(
        zip_bytes(entries + [("x/model.ckpt", BOMB), ("x/notes.txt", b"hi"), ("x/FRAMEWORK/a.bin", b"1")])
    )
    result = unpack(archive, tmp_path / "out")
    written = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert written == sorted(name for name, _ in entries) and result.skipped == 3


@pytest.mark.slow
def test_markdown_report_renders_no_markup_from_export_strings(tmp_path, capsys):
    """diagnosis.md through a real CommonMark renderer with raw HTML on (as many sites render it): no
    tag, link or image from an op name, and every table keeps its columns."""
    from markdown_it import MarkdownIt

    from tests.malformed.cli_cases import hostile_names

    export = hostile_names(tmp_path)
    assert main(["diagnose", str(export), "--out", str(tmp_path / "out"), "--format", "md"]) in (0, 1)
    md = next((tmp_path / "out").rglob("diagnosis.md")).read_text()
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    for bad in ("<script", "<svg", "<img", 'javascript:alert(1)"', "<a href", "<code>code</code>"):
        assert bad not in html, f"{bad!r} reached the rendered page"
    assert "&lt;script&gt;" in html, "the op name is still shown, as text"
    columns = None
    for line in md.splitlines():
        if not line.startswith("|"):
            columns = None  # a table ends
            continue
        pipes = len(re.findall(r"(?<!\\)\|", line.replace("\\\\", "")))
        columns = columns or pipes
        assert pipes == columns, f"a row of another width: {line}"


@pytest.mark.slow
@pytest.mark.parametrize("command", ["diagnose", "batch"])
def test_folders_whose_names_are_not_utf8_are_read_and_named_as_themselves(tmp_path, command, capsys):
    """Issue 45: a folder name holding bytes that are not UTF-8 was not read; it is read through an alias
    outside the input, and labelled with its own name (the bytes shown as \\xNN)."""
    from tests.malformed import base_exports as base

    top = os.fsencode(tmp_path / "in")
    export = base.write_torch_text(Path(os.fsdecode(top + b"/caf\xe9")))
    os.rename(os.fsencode(export), top + b"/caf\xe9/run_\xff_ascend_pt")
    argv = {
        "diagnose": ["diagnose", str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--format", "json"],
        "batch": ["batch", str(tmp_path / "in"), "--catalog", str(tmp_path / "c.duckdb"), "--jobs", "1"],
    }[command]
    assert main(argv) == 0
    assert "UTF-8" not in capsys.readouterr().err
    if command == "diagnose":
        assert [p.name for p in (tmp_path / "out").iterdir()] == ["run__xff_ascend_pt"]
    else:
        con = duckdb.connect(str(tmp_path / "c.duckdb"), read_only=True)
        assert con.execute("SELECT path FROM catalog_runs").fetchall() == [("caf\\xe9/run_\\xff_ascend_pt",)]
    assert os.listdir(top) == [b"caf\xe9"]  # nothing written in the input
