"""The hostile command lines of ``tests/malformed/cli_cases.py`` through the whole CLI.

Each case: the exit code it states, a message matching its pattern, never a traceback or an
"internal error", the input folder byte-identical, nothing new inside an export.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.cli import main
from tests.malformed.cli_cases import CLI_CASES, CliCase
from tests.tree_hash import tree_digest

TRACEBACK = "Traceback (most recent call last)"


def _run_case(case: CliCase, tmp_path: Path, monkeypatch, capsys) -> tuple[int, str, str]:
    run = case.setup(tmp_path)
    for key, value in run.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(run.cwd or tmp_path)
    before = tree_digest(tmp_path / "in")
    code = main(run.argv)
    captured = capsys.readouterr()
    assert tree_digest(tmp_path / "in") == before, f"{run.argv[0]} changed or wrote inside the input folder"
    return code, captured.out, captured.err


@pytest.mark.parametrize("case", CLI_CASES, ids=[c.name for c in CLI_CASES])
def test_cli_hostile_case_exits_as_stated_with_a_named_message(case: CliCase, tmp_path, monkeypatch, capsys):
    code, out, err = _run_case(case, tmp_path, monkeypatch, capsys)
    text = out + err
    assert TRACEBACK not in text and "internal error" not in text, text
    assert code == case.code, f"exit {code}, expected {case.code}:\n{text}"
    if case.message:
        assert re.search(case.message, err if case.code else text), f"no message like {case.message!r}:\n{text}"


def _first_of_each_class() -> list[CliCase]:
    seen: dict[str, CliCase] = {}
    for case in CLI_CASES:
        seen.setdefault(case.cls, case)
    return list(seen.values())


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
        env={**__import__("os").environ, **run.env},
    )
    assert TRACEBACK not in proc.stdout + proc.stderr, proc.stderr
    assert proc.returncode == case.code, proc.stdout + proc.stderr
    assert tree_digest(tmp_path / "in") == before


def test_cli_hostile_corpus_size():
    assert len(CLI_CASES) >= 50
